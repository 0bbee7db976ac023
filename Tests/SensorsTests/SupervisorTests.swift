import Capture
import Foundation
import GyroStore
import Logging
import MetaWear
import TestSupport
import XCTest
@testable import Sensors

/// The supervisor against the in-process emulated board: reconnects, gaps, watchdog, button.
final class SupervisorTests: XCTestCase {
    let address = "C4:BE:84:00:00:01"

    func makeEngine(autoStart: Bool = true) throws -> (GyroStore, CaptureEngine) {
        let store = try GyroStore.inMemory(logger: testLogger())
        var rules = CaptureRules(chunkSize: 500, commitInterval: .milliseconds(50))
        rules.autoStart = autoStart
        let engine = CaptureEngine(store: store, rules: rules, calendar: PeriodCalendar(timeZone: .utc),
                                   logger: testLogger())
        return (store, engine)
    }

    func settings(odr: Gyro.OutputDataRate = .hz100, button: Bool = false) -> SupervisorSettings {
        SupervisorSettings(board: BoardOptions(gyro: .init(outputDataRate: odr, range: .dps2000), subscribeButton: button,
                                               responseTimeout: .milliseconds(300)),
                           connectTimeout: .seconds(2), silenceFloor: .milliseconds(500), batteryInterval: .seconds(1),
                           buttonControlsSession: button, backoff: Backoff(base: .milliseconds(50), cap: .milliseconds(200)),
                           gapConfirmation: .milliseconds(300))
    }

    func testReconnectsAfterDropsSilenceAndLossesWithTheRightGaps() async throws {
        let fake = FakeMetaWear(model: .mmr)
        defer { fake.stop() }
        let (store, engine) = try makeEngine()
        let supervisor = SensorSupervisor(address: address, identity: SensorIdentity(device: address, userId: "u"),
                                          engine: engine, settings: settings(), logger: testLogger())
        let connector = FakeConnector(boards: [address: fake])
        let task = Task { await supervisor.run(connector: connector) }
        // Each fault once the stream runs again, with half a second of samples after it (beyond
        // the 0.3 s gap confirmation) so that its gap is decided.
        var status = try await waitForStatus(supervisor, "streaming") { $0.state == .streaming && $0.samplesReceived >= 50 }
        fake.dropLink()
        status = try await waitForStatus(supervisor, "a reconnect") { [received = status.samplesReceived] in
            $0.reconnects >= 1 && $0.state == .streaming && $0.samplesReceived >= received + 50
        }
        fake.dropSamples(7)
        status = try await waitForStatus(supervisor, "samples after the dropped ones") { [received = status.samplesReceived] in
            $0.samplesReceived >= received + 60
        }
        fake.silent(seconds: 1.2)  // longer than the 0.5 s watchdog
        status = try await waitForStatus(supervisor, "streaming after the silence") { [received = status.samplesReceived] in
            ($0.transitions[.silent] ?? 0) > 0 && $0.state == .streaming && $0.samplesReceived >= received + 50
        }
        fake.dropLink()
        try await waitForStatus(supervisor, "the second reconnect") { [received = status.samplesReceived] in
            $0.reconnects >= 2 && $0.state == .streaming && $0.samplesReceived >= received + 50
        }
        task.cancel()
        await task.value
        try await engine.flush()

        status = await supervisor.status()
        XCTAssertEqual(status.state, .stopped)
        XCTAssertGreaterThanOrEqual(status.reconnects, 2)
        XCTAssertEqual(status.model, "metaMotionR")
        XCTAssertEqual(status.batteryPercent, 99)
        XCTAssertGreaterThan(status.transitions[.silent] ?? 0, 0)
        let (samples, gaps, _) = try await readBack(store, device: address)
        let check = checkWaveform(samples, odr: 100, lsbPerDps: 16.4)
        XCTAssertEqual(check.problems, [])
        let truth = fake.withLock { (fake.samplesDropped, fake.samplesUndelivered, fake.samplesGenerated) }
        let missing = gaps.reduce(0) { $0 + $1.missing }
        // The board streamed on every new link up to the stop, so each outage is measured from the
        // arrival times of its stale samples. The in-process fake answers discovery at once: only
        // a notification or two of them arrive before the stop, and one delivered late (this
        // process's scheduling) lifts the estimate by one. The emulated peer, a real link away,
        // is held to exact counts (SensorPeerTests).
        XCTAssertEqual(Double(missing), Double(truth.0 + truth.1), accuracy: Double(check.segments), "\(gaps.map { ($0.reason, $0.missing) }) truth \(truth)")
        XCTAssertTrue(gaps.contains { $0.reason.isDisconnection }, "\(gaps.map(\.reason))")
        XCTAssertTrue(gaps.contains { $0.reason == .notReceived && $0.missing == 7 }, "\(gaps.map { ($0.reason, $0.missing) })")
        XCTAssertTrue(gaps.contains { $0.reason == .silent }, "\(gaps.map(\.reason))")
        let spacing = spacingReport(samples, odr: 100, lsbPerDps: 16.4)
        XCTAssertLessThan(spacing.worstMs, 1.0, "\(spacing)")
    }

    func testButtonStartsAndStopsSessions() async throws {
        let fake = FakeMetaWear(model: .mms)
        defer { fake.stop() }
        let (store, engine) = try makeEngine(autoStart: false)
        let supervisor = SensorSupervisor(address: address, identity: SensorIdentity(device: address, userId: "u"),
                                          engine: engine, settings: settings(button: true), logger: testLogger())
        let connector = FakeConnector(boards: [address: fake])
        let task = Task { await supervisor.run(connector: connector) }
        let streaming = try await waitForStatus(supervisor, "streaming") { $0.state == .streaming && $0.samplesReceived > 0 }
        fake.pressButton()
        try await waitFor("a session opened by the button") { await engine.openSessions().count == 1 }
        // About 100 samples into the session (1 s at 100 Hz), the second press closes it.
        let opened = await supervisor.status().samplesReceived
        XCTAssertGreaterThan(opened, 0, "\(streaming)")
        try await waitForStatus(supervisor, "100 samples in the session") { $0.samplesReceived >= opened + 100 }
        fake.pressButton()
        try await waitFor("the session closed by the button") { await engine.openSessions().isEmpty }
        task.cancel()
        await task.value
        try await engine.flush()
        let sessions = try await store.sessions().filter { $0.device == address }
        XCTAssertEqual(sessions.count, 1)
        XCTAssertEqual(sessions.first?.isOpen, false)
        XCTAssertEqual(Double(sessions.first?.samples ?? 0), 100, accuracy: 40)
    }

    /// Discovery answers slower than the answer timeout: the timeout doubles until they fit.
    func testSlowDiscoveryLengthensTheTimeoutUntilStreaming() async throws {
        let fake = FakeMetaWear(model: .mmr)
        defer { fake.stop() }
        fake.discoveryDelay = .milliseconds(70)
        let (store, engine) = try makeEngine()
        var settings = settings()
        settings.board.responseTimeout = .milliseconds(40)
        let supervisor = SensorSupervisor(address: address, identity: SensorIdentity(device: address, userId: "u"),
                                          engine: engine, settings: settings, logger: testLogger())
        let connector = FakeConnector(boards: [address: fake])
        let task = Task { await supervisor.run(connector: connector) }
        try await waitForStatus(supervisor, "50 samples", timeout: 10) { $0.samplesReceived >= 50 }
        task.cancel()
        await task.value
        try await engine.flush()
        let status = await supervisor.status()
        XCTAssertGreaterThanOrEqual(status.samplesReceived, 50)
        XCTAssertGreaterThan(status.transitions[.initialising] ?? 0, 1)
        let (samples, _, _) = try await readBack(store, device: address)
        XCTAssertEqual(checkWaveform(samples, odr: 100, lsbPerDps: 16.4).problems, [])
    }

    /// A step no timeout covers (a device information read that only the link's end ends): past
    /// the initialisation deadline the link is dropped with the step named, and the next streams.
    func testAnInitialisationPastItsDeadlineDropsTheLinkNamingTheStep() async throws {
        let fake = FakeMetaWear(model: .mmr)
        defer { fake.stop() }
        fake.withLock { fake.stalledLinks = 1 }
        let (store, engine) = try makeEngine()
        var settings = settings()
        settings.initialisationDeadline = .milliseconds(400)
        let supervisor = SensorSupervisor(address: address, identity: SensorIdentity(device: address, userId: "u"),
                                          engine: engine, settings: settings, logger: testLogger())
        let connector = FakeConnector(boards: [address: fake])
        let task = Task { await supervisor.run(connector: connector) }
        let status = try await waitForStatus(supervisor, "50 samples", timeout: 10) { $0.samplesReceived >= 50 }
        task.cancel()
        await task.value
        try await engine.flush()
        XCTAssertEqual(fake.withLock { fake.connections }, 2, "the stuck link was dropped and a new one made")
        XCTAssertEqual(status.transitions[.initialising], 2)
        XCTAssertEqual(status.lastError, BoardError.initialisationStuck(step: "reading device information", after: .milliseconds(400)).description)
        XCTAssertTrue(status.lastError?.contains("waiting for reading device information") ?? false, status.lastError ?? "nil")
        let (samples, _, _) = try await readBack(store, device: address)
        XCTAssertEqual(checkWaveform(samples, odr: 100, lsbPerDps: 16.4).problems, [])
    }

    /// A gateway stopping while an initialisation is stuck: the supervisor returns without
    /// waiting for the step or the deadline, and its link is dropped.
    func testCancellingAStuckInitialisationReturnsAtOnce() async throws {
        let fake = FakeMetaWear(model: .mmr)
        defer { fake.stop() }
        fake.withLock { fake.stalledLinks = 1 }
        let (_, engine) = try makeEngine()
        var settings = settings()
        settings.initialisationDeadline = .seconds(600)
        let supervisor = SensorSupervisor(address: address, identity: SensorIdentity(device: address, userId: "u"),
                                          engine: engine, settings: settings, logger: testLogger())
        let connector = FakeConnector(boards: [address: fake])
        let task = Task { await supervisor.run(connector: connector) }
        _ = try await waitForStatus(supervisor, "initialising", timeout: 10) { $0.state == .initialising }
        task.cancel()
        let returned = Watched(false)
        Task { await task.value; returned.set(true) }
        let ended = await returned.wait(timeout: 30) { $0 }
        XCTAssertTrue(ended, "the supervisor waited for a stuck step")
        let status = await supervisor.status()
        XCTAssertEqual(status.transitions[.streaming] ?? 0, 0)
        XCTAssertEqual(fake.withLock { fake.connections }, 1)
    }
}
