import BLEHost
import BluetoothWire
import Logging
import PeerSupport
import XCTest

/// Acceptance 2: a controller with 27-octet buffers, 2 credits and delayed completions. Long
/// reads and writes must succeed with the host never exceeding the credits or the size.
final class ACLFlowControlTests: XCTestCase {
    nonisolated(unsafe) static var peer: MetaWearPeer?
    nonisolated(unsafe) static var peerError: (any Error)?

    override class func setUp() {
        super.setUp()
        do {
            peer = try MetaWearPeer(sensors: 1)
        } catch {
            peerError = error
        }
    }

    override class func tearDown() {
        peer?.stop()
        peer = nil
        super.tearDown()
    }

    func testLongReadsAndWritesWithTwoCreditsAndDelayedCompletions() async throws {
        guard let peer = Self.peer else {
            if let skip = Self.peerError as? XCTSkip { throw skip }
            return XCTFail("peer did not start: \(String(describing: Self.peerError))")
        }
        try peer.control(["cmd": "acl_buffer", "size": 27, "credits": 2, "completion_delay_ms": 20])
        let longText = "MbientLab Inc - a deliberately long manufacturer string for blob reads, longer than one MTU of 185? no, but many of 23"
        try peer.control(["cmd": "set_dis", "sensor": 0, "field": "manufacturer", "value": longText])

        let logger = PeerIntegrationTests.logger
        let host = BLEHost(transport: try await TransportFactory.open(peer.transportSpec, logger: logger), logger: logger)
        addTeardownBlock { await host.stop() }
        try await host.start()
        var status = await host.status()
        XCTAssertEqual(status.aclBufferSize, 27)
        XCTAssertEqual(status.aclBufferCount, 2)

        let found = try await host.scan(for: .seconds(1), serviceUUID: MetaWearGATT.service)
        let sensor = try XCTUnwrap(found.first)
        let connection = try await host.connect(to: sensor.address, addressType: sensor.addressType)
        let gatt = connection.gatt
        let services = try await gatt.discoverPrimaryServices()
        let dis = try XCTUnwrap(services.first { $0.uuid == BluetoothUUID(uuid16: 0x180A) })
        let disCharacteristics = try await gatt.discoverCharacteristics(of: dis)
        let manufacturer = try XCTUnwrap(disCharacteristics.first { $0.uuid == BluetoothUUID(uuid16: 0x2A29) })
        let handles = try await MetaWearGATT.discover(connection)

        // MTU 23: Read + Read Blob requests.
        let short = try await gatt.read(manufacturer)
        XCTAssertEqual(String(decoding: short, as: UTF8.self), longText)

        // MTU 185: one Read Response split into several 27-octet ACL fragments.
        let mtu = try await gatt.exchangeMTU(185)
        XCTAssertEqual(mtu, 185)
        let long = try await gatt.read(manufacturer)
        XCTAssertEqual(String(decoding: long, as: UTF8.self), longText)

        // A 150-octet Write Request (7 fragments) and a 400-octet long write (Prepare/Execute).
        // Module 0x7F does not exist: the board records the bytes and ignores them.
        let single = [0x7F, 0x01] + (0..<148).map { UInt8($0) }
        try await gatt.write(handles.command, single, withResponse: true)
        let prepared = [0x7F, 0x02] + (0..<398).map { UInt8($0 % 251) }
        try await gatt.write(handles.command, prepared, withResponse: true)
        // A burst of Write Commands queues behind the two credits.
        for index in 0..<30 {
            try await gatt.write(handles.command, [0x7F, 0x03, UInt8(index)] + [UInt8](repeating: 0xAA, count: 40), withResponse: false)
        }
        // A request after the burst returns once everything before it went out.
        _ = try await gatt.read(manufacturer)

        let peerStatus = try peer.status()
        XCTAssertEqual(peerStatus.controller["overruns"] as? Int, 0, "\(peerStatus.controller["overrun_records"] ?? "")")
        XCTAssertLessThanOrEqual(peerStatus.controller["max_outstanding_seen"] as? Int ?? 99, 2)
        let commands = peerStatus.sensors.first?["commands"] as? [String] ?? []
        XCTAssertTrue(commands.contains(single.map { String(format: "%02x", $0) }.joined()), "150-octet write not seen")
        XCTAssertTrue(commands.contains(prepared.map { String(format: "%02x", $0) }.joined()), "long write not seen")
        XCTAssertEqual(commands.filter { $0.hasPrefix("7f03") }.count, 30)

        await connection.disconnect()
        status = await host.status()
        XCTAssertEqual(status.aclBuffersAvailable, 2)
        XCTAssertEqual(status.malformedPackets, 0)
        await host.stop()
        try peer.control(["cmd": "acl_buffer", "size": 27, "credits": 64, "completion_delay_ms": 0])
    }
}
