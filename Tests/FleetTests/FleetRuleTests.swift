@testable import Fleet
import Logging
import XCTest

/// The rule every gateway of a fleet computes alike (docs/fleet.md).
final class FleetRuleTests: XCTestCase {
    func report(_ gateway: String, online: Bool = true, slots: Int = 4, holding: Set<String> = [], hears: [String: Int] = [:]) -> FleetReport {
        FleetReport(gateway: gateway, online: online, freeSlots: slots, holding: holding, hears: hears)
    }

    func testAHeldSensorStaysWithItsHolderWhateverTheSignals() {
        let reports = [report("a", holding: ["S"]), report("b", hears: ["S": -30])]
        XCTAssertEqual(FleetRule.decide(sensor: "S", reports: reports).owner, "a")
    }

    func testAnOfflineHolderHandsItOn() {
        let reports = [report("a", online: false, holding: ["S"]), report("b", hears: ["S": -80])]
        XCTAssertEqual(FleetRule.decide(sensor: "S", reports: reports).owner, "b")
    }

    func testNobodyHearingItMeansNobodyTries() {
        let decision = FleetRule.decide(sensor: "S", reports: [report("a"), report("b")])
        XCTAssertNil(decision.owner)
        XCTAssertEqual(decision.reason, "no gateway of the fleet hears it")
    }

    func testAFullGatewayIsNoCandidate() {
        let reports = [report("a", slots: 0, hears: ["S": -30]), report("b", hears: ["S": -90])]
        XCTAssertEqual(FleetRule.decide(sensor: "S", reports: reports).owner, "b")
        XCTAssertNil(FleetRule.decide(sensor: "S", reports: [report("a", slots: 0, hears: ["S": -30])]).owner)
    }

    func testTheOrderOfTheReportsDoesNotMatter() {
        let reports = [report("a", hears: ["S": -60]), report("b", hears: ["S": -62]), report("c", hears: ["S": -70])]
        let first = FleetRule.decide(sensor: "S", reports: reports)
        for permutation in [[2, 0, 1], [1, 2, 0], [2, 1, 0]] {
            XCTAssertEqual(FleetRule.decide(sensor: "S", reports: permutation.map { reports[$0] }), first)
        }
    }

    /// Equal signals share the sensors about evenly; a much louder gateway takes most; a few dB
    /// of fading within a 10 dB step changes nothing.
    func testScoresShareBySignal() {
        let sensors = (0..<600).map { "C4:BE:84:00:\(String(format: "%02X", $0 / 256)):\(String(format: "%02X", $0 % 256))" }
        func shares(_ a: Int, _ b: Int) -> Int {
            sensors.filter { FleetRule.decide(sensor: $0, reports: [report("gw-a", hears: [$0: a]), report("gw-b", hears: [$0: b])]).owner == "gw-a" }.count
        }
        XCTAssertEqual(Double(shares(-60, -60)), 300, accuracy: 45, "even")
        XCTAssertGreaterThan(shares(-40, -90), 450, "weights 7 against 2")
        XCTAssertEqual(shares(-61, -60), shares(-69, -60), "the same 10 dB step")
    }

    func testTheHashIsFixed() {
        // The same on every machine and build: gateways of different architectures agree.
        XCTAssertEqual(FleetRule.unitHash("gw-a\u{0}C4:BE:84:00:00:01"), FleetRule.unitHash("gw-a\u{0}C4:BE:84:00:00:01"))
        XCTAssertNotEqual(FleetRule.unitHash("gw-a\u{0}C4:BE:84:00:00:01"), FleetRule.unitHash("gw-b\u{0}C4:BE:84:00:00:01"))
        let u = FleetRule.unitHash("")
        XCTAssertTrue(u > 0 && u < 1)
    }

    func testReportsRoundTripAndBadOnesAreNamed() throws {
        let original = FleetReport(gateway: "gw-a", atMs: 1_800_000_000_000, freeSlots: 3, holding: ["C4:BE:84:00:00:01"],
                                   hears: ["C4:BE:84:00:00:02": -71])
        XCTAssertEqual(try FleetReport(parsing: original.encoded(), topicGateway: "gw-a"), original)
        XCTAssertThrowsError(try FleetReport(parsing: original.encoded(), topicGateway: "gw-b")) { error in
            XCTAssertTrue("\(error)".contains("names gateway \"gw-a\""), "\(error)")
        }
        XCTAssertThrowsError(try FleetReport(parsing: Array("[1]".utf8), topicGateway: "gw-a"))
        XCTAssertThrowsError(try FleetReport(parsing: Array(#"{"gateway":"gw-a","online":true,"hears":{"X":"loud"}}"#.utf8), topicGateway: "gw-a")) { error in
            XCTAssertTrue("\(error)".contains("not an RSSI"), "\(error)")
        }
        for cut in 0..<original.encoded().count {
            XCTAssertThrowsError(try FleetReport(parsing: Array(original.encoded().prefix(cut)), topicGateway: "gw-a"))
        }
    }

    func testTheCoordinatorAnswersAloneUntilCoordinatedThenByTheRule() async {
        let published = Published()
        let coordinator = FleetCoordinator(gateway: "gw-a", slots: 2, logger: Logger(label: "test"), now: { 0 }) { published.add($0) }
        let alone = await coordinator.turn(for: "S")
        XCTAssertTrue(alone.mine, "no channel: every gateway tries")
        await coordinator.channel(up: true)
        let unheard = await coordinator.turn(for: "S")
        XCTAssertFalse(unheard.mine)
        XCTAssertNil(unheard.heldBy, "nobody's link keeps it")
        let seen = unheard.version
        let waiting = Task { await coordinator.untilChanged(since: seen) }
        await coordinator.received(topicGateway: "gw-b", payload: report("gw-b", holding: ["S"]).encoded())
        await waiting.value
        let held = await coordinator.turn(for: "S")
        XCTAssertEqual(held.reason, "held by gw-b")
        XCTAssertEqual(held.heldBy, "gw-b", "the sensors see who holds it without reading the sentence")
        await coordinator.received(topicGateway: "gw-b", payload: FleetReport(gateway: "gw-b", online: false).encoded())
        await coordinator.heard(["S": -70])
        let mine = await coordinator.turn(for: "S")
        XCTAssertTrue(mine.mine, mine.reason)
        await coordinator.holding("S", true)
        let last = try? FleetReport(parsing: published.last ?? [], topicGateway: "gw-a")
        XCTAssertEqual(last?.holding, ["S"])
        XCTAssertEqual(last?.freeSlots, 1)
    }

    /// A held board does not advertise: with every sensor held somewhere, nothing is scanned.
    func testScansAreWantedOnlyForSensorsNobodyHolds() async {
        let coordinator = FleetCoordinator(gateway: "gw-a", slots: 2, logger: Logger(label: "test"), now: { 0 }) { _ in }
        let alone = await coordinator.wantsSightings(of: ["S", "T"])
        XCTAssertFalse(alone, "not coordinated: every gateway tries anyway")
        await coordinator.channel(up: true)
        await coordinator.holding("S", true)
        let one = await coordinator.wantsSightings(of: ["S", "T"])
        XCTAssertTrue(one, "T is held by nobody")
        await coordinator.received(topicGateway: "gw-b", payload: report("gw-b", holding: ["T"]).encoded())
        let none = await coordinator.wantsSightings(of: ["S", "T"])
        XCTAssertFalse(none)
    }

    func testAWaitEndsWhenItsTaskIsCancelled() async {
        let coordinator = FleetCoordinator(gateway: "gw-a", slots: 1, logger: Logger(label: "test"), now: { 0 }) { _ in }
        let seen = await coordinator.version
        let waiting = Task { await coordinator.untilChanged(since: seen) }
        waiting.cancel()
        await waiting.value
    }
}

final class Published: @unchecked Sendable {
    private var reports: [[UInt8]] = []
    private let lock = NSLock()
    func add(_ report: [UInt8]) { lock.lock(); reports.append(report); lock.unlock() }
    var last: [UInt8]? { lock.lock(); defer { lock.unlock() }; return reports.last }
}

import Foundation
