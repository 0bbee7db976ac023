import Capture
import CaptureValues
import Foundation
import GyroStore
import MetaWear
import TestSupport
import XCTest
@testable import Sensors

/// A session handed from one gateway's supervisor to another's (docs/fleet.md), on one emulated
/// board: the samples the board produced between the two links are counted exactly although the
/// second gateway reads the board's clock late. The hand-off carries where the first gateway
/// placed the board's power cycle, and the second keeps it (``SessionHandoff/BoardCycle``).
final class HandoffClockTests: XCTestCase {
    let address = "C4:BE:84:00:00:21"

    func testTheNextGatewayCountsTheHandedOverGapInTheReleasingGatewaysBoardFrame() async throws {
        let fake = FakeMetaWear(model: .mmr)
        defer { fake.stop() }
        let connector = FakeConnector(boards: [address: fake])
        let fleet = TwoGatewayFleet(first: "gw-a")
        let (storeA, engineA) = try makeEngine()
        let (storeB, engineB) = try makeEngine()
        let a = supervisor(engineA, fleet.claims("gw-a"))
        let b = supervisor(engineB, fleet.claims("gw-b"))

        let runA = Task { await a.run(connector: connector) }
        try await waitForStatus(a, "gw-a streaming") { $0.state == .streaming && $0.samplesReceived >= 100 }
        // The board goes to gw-b, whose readings of its clock come back 100 ms late: by its own
        // readings it would place the board's reset 50 ms later, 5 samples at 100 Hz.
        fleet.give(to: "gw-b")
        fake.withLock { fake.clockAnswerDelay = .milliseconds(100) }
        fake.dropLink()
        let released = await fleet.released.wait(timeout: 30) { $0 != nil }
        XCTAssertTrue(released, "gw-a released the session")
        let handoff = try XCTUnwrap(fleet.released.value)
        XCTAssertNotNil(handoff.boardCycle, "the hand-off carries the board's power cycle")

        // Half a second out of either gateway's range.
        try await waitFor("the board streaming to no one") { fake.withLock { fake.samplesUndelivered } >= 50 }
        let runB = Task { await b.run(connector: connector) }
        try await waitForStatus(b, "gw-b streaming") { $0.state == .streaming && $0.samplesReceived >= 150 }
        let undelivered = fake.withLock { fake.samplesUndelivered }
        runB.cancel()
        runA.cancel()
        await runB.value
        await runA.value
        try await engineB.flush()

        let rowA = try await storeA.session(id: handoff.session.id)
        XCTAssertEqual(rowA?.isOpen, false, "gw-a writes the session no more")
        let (samples, gaps, sessions) = try await readBack(storeB, device: address)
        XCTAssertEqual(sessions.map(\.id), [handoff.session.id], "one session, continued at gw-b")
        let handedOver = gaps.filter { $0.reason == .handedOver }
        XCTAssertEqual(handedOver.count, 1, "\(gaps.map { ($0.reason, $0.missing) })")
        // The board produced `undelivered` samples with no link to take them. As in SupervisorTests,
        // the in-process board's first stale notification may be handed on late, by one sample.
        XCTAssertEqual(Double(handedOver.first?.missing ?? -1), Double(undelivered), accuracy: 1,
                       "\(gaps.map { ($0.reason, $0.missing) }), the board left \(undelivered) undelivered")
        let check = checkWaveform(samples, odr: 100, lsbPerDps: 16.4)
        XCTAssertEqual(check.problems, [], "gw-b's samples carry the board's indices")
    }

    // MARK: - Two gateways' engines and claims on one board

    func makeEngine() throws -> (GyroStore, CaptureEngine) {
        let store = try GyroStore.inMemory(logger: testLogger())
        let rules = CaptureRules(chunkSize: 100, commitInterval: .milliseconds(50))
        return (store, CaptureEngine(store: store, rules: rules, calendar: PeriodCalendar(timeZone: .utc), logger: testLogger()))
    }

    func supervisor(_ engine: CaptureEngine, _ claims: any ConnectionClaims) -> SensorSupervisor {
        var settings = SupervisorSettings(board: BoardOptions(gyro: .init(outputDataRate: .hz100, range: .dps2000), responseTimeout: .milliseconds(500)),
                                          connectTimeout: .seconds(2), silenceFloor: .milliseconds(500), batteryInterval: .seconds(60),
                                          backoff: Backoff(base: .milliseconds(50), cap: .milliseconds(200)), gapConfirmation: .milliseconds(300))
        settings.claims = claims
        return SensorSupervisor(address: address, identity: SensorIdentity(device: address, userId: "u"),
                                engine: engine, settings: settings, logger: testLogger())
    }
}

/// What a fleet's coordinator tells two gateways about one board: whose turn it is, and the
/// session hand-off the last holder released.
final class TwoGatewayFleet: Sendable {
    struct State: Sendable {
        var turn: String
        var version: UInt64 = 0
        var handoff: SessionHandoff?
    }
    let state: Watched<State>
    /// The last hand-off released (kept after it is taken), for the test to read.
    let released = Watched<SessionHandoff?>(nil)

    init(first: String) { state = Watched(State(turn: first)) }

    func give(to gateway: String) { state.update { $0.turn = gateway; $0.version += 1 } }
    func wake() { state.update { $0.version += 1 } }
    func claims(_ gateway: String) -> any ConnectionClaims { Claims(fleet: self, gateway: gateway) }

    struct Claims: ConnectionClaims {
        let fleet: TwoGatewayFleet
        let gateway: String

        func turn(for address: String) async -> (mine: Bool, heldBy: String?, reason: String, version: UInt64) {
            let state = fleet.state.value
            return (state.turn == gateway, state.turn == gateway ? nil : state.turn, "the fleet's turn: \(state.turn)", state.version)
        }
        func untilChanged(since version: UInt64) async {
            // As the fleet's coordinator does, it returns when the task is cancelled: a change wakes it.
            await withTaskCancellationHandler {
                _ = await fleet.state.wait(timeout: 600) { $0.version != version }
            } onCancel: { [fleet] in fleet.wake() }
        }
        func holding(_ address: String, _ held: Bool) async {}
        func heard(_ sightings: [String: Int]) async {}
        func wantsSightings(of sensors: Set<String>) async -> Bool { false }
        func handsOffSessions() async -> Bool { true }
        func release(_ address: String, _ handoff: SessionHandoff) async {
            fleet.state.update { $0.handoff = handoff; $0.version += 1 }
            fleet.released.set(handoff)
        }
        func handoff(for address: String) async -> SessionHandoff? { fleet.state.value.handoff }
        func tookHandoff(_ address: String, session: String) async {
            fleet.state.update { if $0.handoff?.session.id == session { $0.handoff = nil } }
        }
    }
}
