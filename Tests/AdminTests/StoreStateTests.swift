@testable import Admin
import Capture
import Foundation
import GatewayConfig
@testable import GyroStore
import JSON
import TestSupport
import XCTest

/// The words an operator reads for a store that loses unpublished data: `full` when the disk
/// has no room, `atLimit` when `retention.maxStoreBytes` is reached, in the status, the metrics
/// and the systemd STATUS line, and `ok` again afterwards.
final class StoreStateTests: XCTestCase {
    let sensor = SensorIdentity(device: "C4:BE:84:00:00:01", userId: "user-1")
    let t0 = 1_795_000_000_000.0

    struct Fixture {
        let store: GyroStore
        let engine: CaptureEngine
        let api: AdminAPI
        let watchdog: WatchdogService
    }

    func fixture(directory: String, maxBytes: Int, reserveBytes: Int = StoreReserve.defaultBytes) throws -> Fixture {
        let json = """
            {"gatewayId": "store-state", "timeZone": "UTC", "bluetooth": {"transport": "hci:0"}, "mqtt": {"host": "broker"},
             "admin": {"socketPath": "\(directory)/admin.sock"}}
            """
        let configuration = try GatewayConfiguration.parse(Data(json.utf8), baseDirectory: directory)
        let store = try GyroStore.open(directory: directory + "/data", maxBytes: maxBytes, reserveBytes: reserveBytes, logger: testLogger())
        let engine = CaptureEngine(store: store, rules: CaptureRules(chunkSize: 500, commitInterval: .seconds(60)),
                                   calendar: PeriodCalendar(timeZone: .utc), logger: testLogger())
        let api = AdminAPI(configuration: configuration, store: store, engine: engine, providers: AdminProviders(), version: "test",
                           access: try AdminAccessPolicy())
        let watchdog = WatchdogService(notifier: SystemdNotifier(environment: [:]), store: store, engine: engine, logger: testLogger(),
                                       environment: [:])
        return Fixture(store: store, engine: engine, api: api, watchdog: watchdog)
    }

    /// 500-sample chunks of values that compact little (~7 KB each), nothing published.
    func feed(_ engine: CaptureEngine, chunks: Int) async throws {
        _ = try await engine.startSession(sensor: sensor, atMs: t0)
        for start in stride(from: Int64(0), to: Int64(chunks * 500), by: 50) {
            let samples = (start..<start + 50).map { i -> StoredSample in
                let noise = UInt64(i) &* 0x9E37_79B9_7F4A_7C15
                return StoredSample(timestampMs: t0 + Double(i) * 20, x: Float(i), y: Float(noise >> 44) / 512 - 1024, z: Float((noise >> 24) & 0xFFFFF) / 512)
            }
            try await engine.append(sensor: sensor, stream: .gyro, odrHz: 50, range: 2000, firstIndex: start, samples: samples)
        }
        try await engine.flush()
    }

    func store(_ fixture: Fixture) async throws -> [String: Any] {
        let response = await fixture.api.respond(to: AdminRequest(method: "GET", target: "/v1/status"))
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        return try XCTUnwrap(object["store"] as? [String: Any])
    }

    func metric(_ fixture: Fixture, _ name: String) async -> String? {
        let response = await fixture.api.respond(to: AdminRequest(method: "GET", target: "/metrics"))
        return String(decoding: response.body, as: UTF8.self).split(separator: "\n")
            .first { $0.hasPrefix("gyrogate_\(name) ") }.map { String($0.split(separator: " ")[1]) }
    }

    func testAStoreAtMaxStoreBytesSaysAtLimitInEveryPlace() async throws {
        let directory = try TemporaryDirectory("gyrogate-admin")
        let fixture = try fixture(directory: directory.path, maxBytes: 160 << 10)
        try await feed(fixture.engine, chunks: 30)
        try await fixture.engine.enforceRetention()

        var store = try await store(fixture)
        XCTAssertEqual(store["state"] as? String, "atLimit")
        XCTAssertEqual(store["limitSetBy"] as? String, "retention.maxStoreBytes")
        XCTAssertTrue((store["detail"] as? String)?.contains("raise retention.maxStoreBytes") == true, "\(store)")
        XCTAssertNotNil(store["atLimitSinceMs"] as? Double)
        XCTAssertEqual(store["fullEpisodes"] as? Int, 0)
        var atLimit = await metric(fixture, "store_at_limit")
        XCTAssertEqual(atLimit, "1")
        let full = await metric(fixture, "store_full")
        XCTAssertEqual(full, "0")
        let check = await fixture.watchdog.check(previous: nil)
        XCTAssertTrue(check.healthy, "a limit reached is no reason for a restart")
        XCTAssertTrue(check.status.hasPrefix("store: at limit (retention.maxStoreBytes"), check.status)

        try await fixture.engine.enforceRetention()
        store = try await self.store(fixture)
        XCTAssertEqual(store["state"] as? String, "ok")
        atLimit = await metric(fixture, "store_at_limit")
        XCTAssertEqual(atLimit, "0")
    }

    func testRetentionEvictingForWantOfDiskSaysFullInEveryPlace() async throws {
        let disk: SmallFilesystem
        do { disk = try SmallFilesystem(bytes: 12 << 20) } catch let error as SmallFilesystem.Unavailable { throw XCTSkip(error.description) }
        let fixture = try fixture(directory: disk.path, maxBytes: 1 << 30, reserveBytes: 1 << 20)
        try await feed(fixture.engine, chunks: 160)
        try await fixture.store.writeWithoutTransaction { db in try db.execute("PRAGMA wal_checkpoint(PASSIVE)") }
        fixture.store.reserve?.release()
        disk.fill(leaving: 256 << 10)
        let report = try await fixture.engine.enforceRetention()
        XCTAssertTrue(report.evictedForLackOfDisk, "\(report)")

        let store = try await store(fixture)
        XCTAssertEqual(store["state"] as? String, "full")
        XCTAssertEqual(store["limitSetBy"] as? String, "disk")
        XCTAssertEqual(store["fullEpisodes"] as? Int, 1)
        XCTAssertEqual(store["reserveHeldBytes"] as? Int, 0)
        XCTAssertLessThan(try XCTUnwrap(store["diskRoomBytes"] as? Int), 0)
        XCTAssertTrue((store["detail"] as? String)?.contains("the disk has no room") == true, "\(store)")
        let full = await metric(fixture, "store_full")
        XCTAssertEqual(full, "1")
        let check = await fixture.watchdog.check(previous: nil)
        XCTAssertTrue(check.status.hasPrefix("store: full ("), check.status)

        disk.unfill()
        try await fixture.engine.enforceRetention()
        let after = try await self.store(fixture)
        XCTAssertEqual(after["state"] as? String, "ok")
        XCTAssertEqual(after["evictedUnpublishedChunks"] as? Int, store["evictedUnpublishedChunks"] as? Int)
    }
}
