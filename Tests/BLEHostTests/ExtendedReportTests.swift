import BLEHost
import BluetoothWire
import Logging
import PeerSupport
import XCTest

/// Stock bumble scan reports (`--scan-reports bumble`): LE Extended Advertising Reports, each
/// advertisement reported twice and no duplicate filtering. The host must decode them and list
/// each sensor once, with random advertising addresses too.
final class ExtendedReportTests: XCTestCase {
    func testExtendedReportsAreDecodedAndDeduplicated() async throws {
        let peer = try MetaWearPeer(sensors: 3, extraArguments: ["--scan-reports", "bumble", "--adv-address", "random"])
        defer { peer.stop() }
        let logger = PeerIntegrationTests.logger
        let host = BLEHost(transport: try await TransportFactory.open(peer.transportSpec, logger: logger), logger: logger)
        addTeardownBlock { await host.stop() }
        try await host.start()
        var found: [Advertisement] = []
        for _ in 0..<3 where found.count < 3 {
            found = try await host.scan(for: .milliseconds(1500), serviceUUID: MetaWearGATT.service)
        }
        XCTAssertEqual(found.count, 3, "\(found)")
        XCTAssertEqual(Set(found.map(\.address)).count, 3)
        XCTAssertTrue(found.allSatisfy { $0.addressType == .random && $0.name == "MetaWear" })
        let status = await host.status()
        XCTAssertEqual(status.malformedPackets, 0)
        // A random-address sensor found this way is connectable.
        let connection = try await host.connect(to: found[0].address, addressType: found[0].addressType)
        let handles = try await MetaWearGATT.discover(connection)
        XCTAssertEqual(handles.notify.uuid, MetaWearGATT.notify)
        await connection.disconnect()
        await host.stop()
    }

    func testAddressFilterKeepsOnlyConfiguredSensors() async throws {
        let peer = try MetaWearPeer(sensors: 3)
        defer { peer.stop() }
        let logger = PeerIntegrationTests.logger
        let host = BLEHost(transport: try await TransportFactory.open(peer.transportSpec, logger: logger), logger: logger)
        addTeardownBlock { await host.stop() }
        try await host.start()
        let wanted = try BluetoothAddress(parsing: "C4:BE:84:00:00:02")
        let found = try await host.scan(for: .milliseconds(1500), addresses: [wanted])
        XCTAssertEqual(found.map(\.address), [wanted])
        let everything = try await host.scan(for: .milliseconds(1500))
        XCTAssertEqual(everything.count, 3)
        await host.stop()
    }
}
