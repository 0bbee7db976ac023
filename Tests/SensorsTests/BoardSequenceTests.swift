import Foundation
import Logging
import MetaWear
import XCTest
@testable import Sensors

/// The exact bytes the gateway writes to a MetaMotion R (BMI160) and S (BMI270).
final class BoardSequenceTests: XCTestCase {
    static let discovery = ["01", "02", "03", "04", "05", "07", "08", "09", "0a", "0b", "0c", "0d", "0f", "11", "12",
                            "13", "14", "15", "16", "19", "fe"].map { "\($0) 80" }

    func runInit(_ model: FakeMetaWear.Model, _ options: BoardOptions) async throws -> (FakeMetaWear, MetaWearBoard) {
        let fake = FakeMetaWear(model: model)
        let board = MetaWearBoard(link: fake.connect(), options: options, logger: Logger(label: "test"), now: FakeMetaWear.now)
        try await board.initialise()
        try await board.startStreaming()
        return (fake, board)
    }

    func testMetaMotionRInitAndStart100HzUnpacked() async throws {
        let (fake, board) = try await runInit(.mmr, BoardOptions(gyro: .init(outputDataRate: .hz100, range: .dps2000)))
        defer { fake.stop() }
        let info = await board.info
        XCTAssertEqual(info.model, .metaMotionR)
        XCTAssertEqual(info.gyroChip, .bmi160)
        XCTAssertEqual(info.firmwareRevision, "1.7.3")
        XCTAssertEqual(fake.writes, Self.discovery + [
            "13 83",  // what is the board running? (a matching stream is the gateway's own, kept across the reconnect)
            "0b 84", "0b 84", "0b 84", "0b 84",  // the log clock, read 4 times to bound the reset time; a new reset_uid: the board reset
            // reset: gyro off, interrupt off, unsubscribe data and packed; accelerometer the same
            "13 01 00", "13 02 00 01", "13 05 00", "13 07 00", "03 01 00", "03 02 00 01", "03 04 00", "03 1c 00",
            // logging stop, events, loggers, processors
            "0b 01 00", "0a 05", "0b 0a", "09 08",
            "13 83",  // barrier
            "13 03 28 00",
            // unpacked: through a time accounter (board time), its output subscribed instead of 13 05
            "09 02 13 05 ff a0 11 31 03", "09 07 00 01", "09 03 01",
            "13 02 01 00", "13 01 01",
            "11 09 06 00 06 00 00 00 58 02",  // 100 notifications/s: ask for 7.5 ms
        ])
        let accounter = await board.gyroAccounter
        XCTAssertEqual(accounter, 0)
        let before = fake.writes.count
        try await board.stopStreaming()
        XCTAssertEqual(Array(fake.writes[before...]), ["13 01 00", "13 02 00 01", "13 05 00", "09 06 00", "13 83"],
                       "stop, remove the accounter, then the barrier")
    }

    func testMetaMotionSInitAndStart200HzPackedWithButtonAndLED() async throws {
        let options = BoardOptions(gyro: .init(outputDataRate: .hz200, range: .dps1000), ledOnStreamingStart: true,
                                   subscribeButton: true)
        let (fake, board) = try await runInit(.mms, options)
        defer { fake.stop() }
        let info = await board.info
        XCTAssertEqual(info.model, .metaMotionS)
        XCTAssertEqual(info.gyroChip, .bmi270)
        XCTAssertEqual(Array(fake.writes.dropFirst(Self.discovery.count)), [
            "13 83", "0b 84", "0b 84", "0b 84", "0b 84",
            "13 01 00", "13 02 00 01", "13 04 00", "13 05 00", "03 01 00", "03 02 00 01", "03 04 00", "03 05 00",
            "0b 01 00", "0a 05", "0b 0a", "09 08",
            "13 83",
            "13 03 29 01",
            // above 100 Hz, up to 400: 2 samples per notification through a packer, then the accounter
            "09 02 13 04 ff a0 10 05 01", "09 02 09 03 00 a0 11 31 03", "09 07 01 01", "09 03 01",
            "13 02 01 00", "13 01 01",
            "01 01 01",
            "11 09 06 00 06 00 00 00 58 02",
            "02 03 00 02 1f 00 00 00 32 00 00 00 f4 01 00 00 03", "02 01 01",  // green blink ×3, play
        ])
        let before = fake.writes.count
        try await board.stopStreaming()
        XCTAssertEqual(Array(fake.writes[before...]), ["13 01 00", "13 02 00 01", "13 04 00", "01 01 00", "09 06 01", "09 06 00", "13 83"])
    }

    func testMetaMotionR800HzUsesThePackedRegisterStampedOnArrival() async throws {
        let (fake, board) = try await runInit(.mmr, BoardOptions(gyro: .init(outputDataRate: .hz800, range: .dps2000)))
        defer { fake.stop() }
        XCTAssertEqual(Array(fake.writes.suffix(5)), ["13 03 2b 00", "13 07 01", "13 02 01 00", "13 01 01",
                                                      "11 09 06 00 06 00 00 00 58 02"])
        let accounter = await board.gyroAccounter
        XCTAssertNil(accounter)
    }

    func testMetaMotionS100HzUnpackedWithAccelerometer() async throws {
        let options = BoardOptions(gyro: .init(outputDataRate: .hz100, range: .dps500),
                                   accelerometer: .init(outputDataRate: .hz50, range: .g16))
        let (fake, board) = try await runInit(.mms, options)
        defer { fake.stop() }
        XCTAssertEqual(Array(fake.writes.suffix(11)), [
            "13 03 28 02", "09 02 13 04 ff a0 11 31 03", "09 07 00 01", "09 03 01", "13 02 01 00", "13 01 01",
            "03 03 a7 03", "03 04 01", "03 02 01 00", "03 01 01",
            "11 09 06 00 06 00 00 00 58 02",
        ])
        let before = fake.writes.count
        try await board.stopStreaming()
        XCTAssertEqual(Array(fake.writes[before...]),
                       ["03 01 00", "03 02 00 01", "03 04 00", "13 01 00", "13 02 00 01", "13 04 00", "09 06 00", "13 83"])
    }

    func testSlowUnansweredDiscoveryTimesOut() async throws {
        let fake = FakeMetaWear(model: .mmr)
        defer { fake.stop() }
        fake.discoveryDelay = .milliseconds(300)
        let board = MetaWearBoard(link: fake.connect(), options: BoardOptions(responseTimeout: .milliseconds(100)),
                                  logger: Logger(label: "test"), now: FakeMetaWear.now)
        do {
            try await board.initialise()
            XCTFail("expected a timeout")
        } catch BoardError.timeout(let what) {
            XCTAssertTrue(what.contains("01 80"), what)
        }
    }

    /// A power cycle placed by an earlier link keeps its reset time, so its streamed and logged
    /// samples share one frame; a reading far from it is another cycle reusing the `reset_uid`.
    func testAPowerCycleKeepsTheResetTimeFirstReadForIt() async throws {
        func clockRead(known: [UInt8: Double]) async throws -> BoardClock? {
            let fake = FakeMetaWear(model: .mmr)
            defer { fake.stop() }
            let clocks = Clocks()
            let board = MetaWearBoard(link: fake.connect(), options: BoardOptions(), logger: Logger(label: "test"),
                                      knownResetTimes: known, now: FakeMetaWear.now) { events in
                for case .clock(let clock) in events { clocks.append(clock) }
            }
            try await board.initialise()
            return clocks.first
        }
        let first = try await clockRead(known: [:])
        let read = try XCTUnwrap(first)
        XCTAssertEqual(read.resetUID, 0)
        XCTAssertEqual(read.resetTime, FakeMetaWear.now(), accuracy: 5, "the fake booted just now")
        let placed = read.resetTime - 0.3
        let kept = try await clockRead(known: [0: placed])
        XCTAssertEqual(kept.map { BoardClock(resetUID: $0.resetUID, resetTime: $0.resetTime) }, BoardClock(resetUID: 0, resetTime: placed),
                       "within half a second: the same cycle")
        XCTAssertEqual(try XCTUnwrap(kept?.measuredResetTime), read.resetTime, accuracy: 5, "and where this reading alone puts it")
        let lapped = try await clockRead(known: [0: placed - Logging.tickLapSeconds])
        XCTAssertEqual(lapped.map { BoardClock(resetUID: $0.resetUID, resetTime: $0.resetTime) }, BoardClock(resetUID: 0, resetTime: placed),
                       "a lap of the tick later: the same cycle, its frame kept")
        let far = try await clockRead(known: [0: read.resetTime - 600])
        let other = try XCTUnwrap(far)
        XCTAssertEqual(other.resetTime, read.resetTime, accuracy: 5, "ten minutes away: another cycle, read anew")
        XCTAssertNotEqual(other.resetTime, read.resetTime - 600)
    }

    func testBatteryRead() async throws {
        let (fake, board) = try await runInit(.mmr, BoardOptions())
        defer { fake.stop() }
        fake.setBattery(57, 3900)
        let state = try await board.readBattery()
        XCTAssertEqual(state, Settings.BatteryState(chargePercent: 57, voltageMillivolts: 3900))
    }
}

/// What a board reported, collected from its event callback.
private final class Clocks: @unchecked Sendable {
    private let lock = NSLock()
    private var clocks: [BoardClock] = []
    func append(_ clock: BoardClock) { lock.withLock { clocks.append(clock) } }
    var first: BoardClock? { lock.withLock { clocks.first } }
}
