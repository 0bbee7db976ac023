import Capture
import Foundation
import GyroStore
import MetaWear
import TestSupport
import XCTest
@testable import Sensors

/// Configured sensors plus discovery, within bluetooth.maxSensors.
final class SensorFleetTests: XCTestCase {
    func testDiscoveryAddsScannedSensorsUpToTheLimit() async throws {
        let boards = (1...3).map { _ in FakeMetaWear(model: .mmr) }
        defer { boards.forEach { $0.stop() } }
        let addresses = (1...3).map { String(format: "C4:BE:84:00:00:%02X", $0) }
        let connector = FakeConnector(boards: Dictionary(uniqueKeysWithValues: zip(addresses, boards)))
        let store = try GyroStore.inMemory(logger: testLogger())
        let engine = CaptureEngine(store: store, rules: CaptureRules(chunkSize: 500, commitInterval: .milliseconds(50)),
                                   calendar: PeriodCalendar(timeZone: .utc), logger: testLogger())
        let fleet = SensorFleet(configured: [.init(address: addresses[1], userId: "known")],
                                discovery: .init(userId: "found", maxSensors: 4, scanEvery: .milliseconds(200), scanFor: .milliseconds(10)),
                                limit: 2, engine: engine,
                                settings: SupervisorSettings(board: BoardOptions(gyro: .init(outputDataRate: .hz50, range: .dps2000))),
                                logger: testLogger())
        let task = Task { await fleet.run(connector: connector) }
        try await waitFor("two sensors streaming") {
            let status = await fleet.status()
            return status.count == 2 && status.allSatisfy { $0.state == .streaming && $0.samplesReceived > 0 }
        }
        // Full after its first scan, the fleet scans no more: nothing can join past the limit.
        XCTAssertEqual(connector.scans.value, 1, "a full fleet stops scanning")
        let status = await fleet.status()
        task.cancel()
        await task.value
        XCTAssertEqual(status.map(\.address), [addresses[1], addresses[0]], "configured first, then the first one scanned; limit 2")
        XCTAssertEqual(status.map(\.userId), ["known", "found"])
        XCTAssertTrue(status.allSatisfy { $0.state == .streaming && $0.samplesReceived > 0 }, "\(status.map { ($0.state, $0.samplesReceived) })")
        let after = await fleet.status()
        XCTAssertTrue(after.allSatisfy { $0.state == .stopped })
        XCTAssertEqual(boards[2].withLock { boards[2].connections }, 0)
    }
}
