import BLEHost
import BluetoothWire
import HCI
import Logging
import PeerSupport
import XCTest
import SupportCore

/// The real stack (H4/TCP transport, BLEHost, GATT client) against the bumble MetaWear peer.
final class PeerIntegrationTests: XCTestCase {
    nonisolated(unsafe) static var peer: MetaWearPeer?
    nonisolated(unsafe) static var peerError: (any Error)?
    static let sensorCount = 4

    override class func setUp() {
        super.setUp()
        do {
            peer = try MetaWearPeer(sensors: sensorCount)
        } catch {
            peerError = error
        }
    }

    override class func tearDown() {
        peer?.stop()
        peer = nil
        super.tearDown()
    }

    func requirePeer() throws -> MetaWearPeer {
        if let peer = Self.peer { return peer }
        if let error = Self.peerError as? XCTSkip { throw error }
        XCTFail("peer did not start: \(String(describing: Self.peerError))")
        throw XCTSkip("peer did not start")
    }

    static var logger: Logger {
        var logger = Logger(label: "test")
        logger.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .warning
        return logger
    }

    func makeHost(_ peer: MetaWearPeer, configure: (inout BLEHostConfiguration) -> Void = { _ in }) async throws -> BLEHost {
        let transport = try await TransportFactory.open(peer.transportSpec, logger: Self.logger)
        var configuration = BLEHostConfiguration()
        configure(&configuration)
        let host = BLEHost(transport: transport, configuration: configuration, logger: Self.logger)
        // The peer serves one HCI client at a time: a failed test must not leave its host connected.
        addTeardownBlock { await host.stop() }
        try await host.start()
        return host
    }

    func scanSensors(_ host: BLEHost, expected: Int) async throws -> [Advertisement] {
        var found: [Advertisement] = []
        for _ in 0..<3 where found.count < expected {
            found = try await host.scan(for: .milliseconds(1500), serviceUUID: MetaWearGATT.service)
        }
        return found
    }

    // Acceptance 1: scan, connect 4, discover, subscribe, notifications on all at once.
    func testScanConnectAndStreamFromFourSensors() async throws {
        let peer = try requirePeer()
        let host = try await makeHost(peer)
        let sensors = try await scanSensors(host, expected: Self.sensorCount)
        XCTAssertEqual(sensors.count, Self.sensorCount, "found \(sensors)")
        XCTAssertTrue(sensors.allSatisfy { $0.name == "MetaWear" && $0.isConnectable })

        // Four connects at once: the host runs them one after the other on the single initiator.
        let connections = try await withThrowingTaskGroup(of: LEConnection.self) { group in
            for sensor in sensors {
                group.addTask { try await host.connect(to: sensor.address, addressType: sensor.addressType) }
            }
            var all: [LEConnection] = []
            for try await connection in group { all.append(connection) }
            return all.sorted { $0.peer < $1.peer }
        }
        XCTAssertEqual(connections.map(\.peer), sensors.map(\.address))
        let value1 = await host.status().connections.count
        XCTAssertEqual(value1, Self.sensorCount)

        let counts = try await withThrowingTaskGroup(of: (Int, Int, Bool).self) { group in
            for (index, connection) in connections.enumerated() {
                group.addTask {
                    let handles = try await MetaWearGATT.discover(connection)
                    let stream = try await connection.gatt.subscribe(handles.notify)
                    for command in MetaWearGATT.gyroStart() {
                        try await connection.gatt.write(handles.command, command, withResponse: true)
                    }
                    var received = 0
                    var inOrder = true
                    var last: Int16?
                    for await value in stream {
                        guard let x = value.gyroSampleX else { continue }
                        if let last, x != last &+ 1 { inOrder = false }
                        last = x
                        received += 1
                        if received == 50 { break }
                    }
                    for command in MetaWearGATT.gyroStop {
                        try await connection.gatt.write(handles.command, command, withResponse: true)
                    }
                    return (index, received, inOrder)
                }
            }
            var results: [Int: (Int, Bool)] = [:]
            for try await (index, received, inOrder) in group { results[index] = (received, inOrder) }
            return results
        }
        for index in 0..<Self.sensorCount {
            XCTAssertEqual(counts[index]?.0, 50, "sensor \(index)")
            XCTAssertEqual(counts[index]?.1, true, "sensor \(index) in order")
        }
        let streaming = await host.status()
        XCTAssertTrue(streaming.connections.allSatisfy { $0.notificationsReceived >= 50 && $0.attDropped == 0 },
                      "\(streaming.connections)")
        for connection in connections {
            await connection.disconnect()
            let value2 = await connection.isConnected
            XCTAssertFalse(value2)
        }
        let status = await host.status()
        XCTAssertEqual(status.connections.count, 0)
        XCTAssertEqual(status.aclBuffersAvailable, status.aclBufferCount)
        XCTAssertEqual(status.malformedPackets, 0)
        await host.stop()
    }

    // Acceptance 1: disconnect and reconnect 20 times without leaking state.
    func testReconnectTwentyTimes() async throws {
        let peer = try requirePeer()
        let host = try await makeHost(peer)
        let sensors = try await scanSensors(host, expected: 1)
        let sensor = try XCTUnwrap(sensors.first)
        for round in 0..<20 {
            let connection = try await host.connect(to: sensor.address, addressType: sensor.addressType)
            let handles = try await MetaWearGATT.discover(connection)
            let stream = try await connection.gatt.subscribe(handles.notify)
            let finished = Task { for await _ in stream {}; return true }
            await connection.disconnect()
            let reason = await connection.waitForDisconnection()
            // A real controller reports 0x16 (terminated by local host); bumble echoes our 0x13.
            XCTAssertTrue([.connectionTerminatedByLocalHost, .remoteUserTerminatedConnection].contains(reason), "round \(round): \(reason)")
            let streamFinished = await finished.value
            XCTAssertTrue(streamFinished)
            do {
                _ = try await connection.gatt.read(handles.command)
                XCTFail("read on a closed link succeeded")
            } catch let error as GATTError {
                XCTAssertEqual(error, .disconnected(request: "Read 0x\(String(handles.command.valueHandle, radix: 16))"))
            }
        }
        let status = await host.status()
        XCTAssertEqual(status.connections.count, 0)
        XCTAssertEqual(status.connectionsOpened, 20)
        XCTAssertEqual(status.connectionsClosed, 20)
        XCTAssertEqual(status.aclBuffersAvailable, status.aclBufferCount)
        XCTAssertEqual(status.commandTimeouts, 0)
        let peerStatus = try peer.status()
        XCTAssertEqual(peerStatus.sensors.filter { $0["connected"] as? Bool == true }.count, 0)
        await host.stop()
    }

    // Acceptance 4: a peer-initiated connection parameter update is answered, then applied.
    func testPeerInitiatedConnectionParameterUpdateIsAccepted() async throws {
        let peer = try requirePeer()
        let host = try await makeHost(peer)
        let value3 = try await scanSensors(host, expected: 1).first
        let sensor = try XCTUnwrap(value3)
        let connection = try await host.connect(to: sensor.address, addressType: sensor.addressType)
        let index = try XCTUnwrap(try peer.status().sensors.firstIndex { $0["host_handle"] as? Int == Int(connection.handle) })
        let reply = try peer.control(["cmd": "conn_param_update", "sensor": index, "min": 12, "max": 24,
                                      "latency": 0, "timeout": 400])
        let request = try XCTUnwrap(reply["request"] as? [String: Any])
        XCTAssertEqual(request["result"] as? String, "accepted")
        // The LE Connection Update that follows completes at once in bumble.
        // The host announces no parameter change; its status is polled until the new interval shows.
        _ = await eventually(timeout: 10) { await host.status().connections.first?.intervalMs == 30 }
        let status = await host.status()
        XCTAssertEqual(status.parameterRequestsAccepted, 1)
        XCTAssertEqual(status.connections.first?.intervalMs, 30)
        XCTAssertEqual(status.connections.first?.supervisionTimeoutMs, 4000)

        // An invalid request (timeout too short for the interval) is rejected.
        let rejected = try peer.control(["cmd": "conn_param_update", "sensor": index, "min": 800, "max": 800,
                                         "latency": 4, "timeout": 100])
        XCTAssertEqual((rejected["request"] as? [String: Any])?["result"] as? String, "rejected")

        // Host-initiated update.
        try await connection.requestConnectionParameters(minIntervalMs: 15, maxIntervalMs: 15, latency: 0,
                                                         supervisionTimeoutMs: 2000)
        let value4 = await host.status().connections.first?.intervalMs
        XCTAssertEqual(value4, 15)
        await connection.disconnect()
        await host.stop()
    }

    // Acceptance 3: a command the controller never answers times out instead of hanging.
    func testUnansweredCommandTimesOut() async throws {
        let peer = try requirePeer()
        let host = try await makeHost(peer) { $0.commandTimeout = .milliseconds(500) }
        try peer.control(["cmd": "swallow_commands", "count": 1, "opcode": Int(HCIOpcode.leSetScanParameters.rawValue)])
        let started = ContinuousClock.now
        do {
            _ = try await host.scan(for: .milliseconds(200))
            XCTFail("scan succeeded although its first command was swallowed")
        } catch let error as BLEHostError {
            XCTAssertEqual(error, .commandTimeout(opcode: .leSetScanParameters, after: .milliseconds(500)))
            XCTAssertTrue("\(error)".contains("did not answer"))
        }
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(5))
        let value5 = await host.status().commandTimeouts
        XCTAssertEqual(value5, 1)
        // The host still works afterwards.
        let found = try await scanSensors(host, expected: 1)
        XCTAssertFalse(found.isEmpty)
        await host.stop()
    }

    // Connect timeout: an address nobody advertises is cancelled, and the host is usable after.
    func testConnectTimeoutCancelsTheAttempt() async throws {
        let peer = try requirePeer()
        let host = try await makeHost(peer)
        let nobody = try BluetoothAddress(parsing: "C4:BE:84:00:00:7F")
        do {
            _ = try await host.connect(to: nobody, addressType: .public, timeout: .milliseconds(500))
            XCTFail("connected to nobody")
        } catch let error as BLEHostError {
            XCTAssertEqual(error, .connectTimeout(address: nobody, after: .milliseconds(500)))
        }
        let value6 = await host.status().isConnecting
        XCTAssertFalse(value6)
        let value7 = try await scanSensors(host, expected: 1).first
        let sensor = try XCTUnwrap(value7)
        let connection = try await host.connect(to: sensor.address, addressType: sensor.addressType)
        let value8 = await connection.isConnected
        XCTAssertTrue(value8)
        await connection.disconnect()
        await host.stop()
    }

    // Disconnection reasons from the peer side reach waitForDisconnection.
    func testPeerDropGivesTheReason() async throws {
        let peer = try requirePeer()
        let host = try await makeHost(peer)
        let value9 = try await scanSensors(host, expected: 1).first
        let sensor = try XCTUnwrap(value9)
        let connection = try await host.connect(to: sensor.address, addressType: sensor.addressType)
        let index = try XCTUnwrap(try peer.status().sensors.firstIndex { $0["host_handle"] as? Int == Int(connection.handle) })
        try peer.control(["cmd": "drop_link", "sensor": index, "reason": 0x08])
        let reason = await connection.waitForDisconnection()
        XCTAssertEqual(reason, .connectionTimeout)
        let value10 = await host.status().connections.count
        XCTAssertEqual(value10, 0)
        await host.stop()
    }

    // stop() disconnects, closes the transport, and the controller side sees the client go.
    func testStopReleasesLinksAndTheTransport() async throws {
        let peer = try requirePeer()
        let host = try await makeHost(peer)
        let found = try await scanSensors(host, expected: 1)
        let sensor = try XCTUnwrap(found.first)
        let connection = try await host.connect(to: sensor.address, addressType: sensor.addressType)
        let handles = try await MetaWearGATT.discover(connection)
        let stream = try await connection.gatt.subscribe(handles.notify)
        await host.stop()
        for await _ in stream {}
        let connected = await connection.isConnected
        XCTAssertFalse(connected)
        let status = await host.status()
        XCTAssertEqual(status.state, .stopped)
        // The peer's control socket answers questions only; it is asked until the link is gone.
        _ = await eventually(timeout: 10) { (try? peer.status().controller["hci_client_connected"] as? Bool) == false }
        let controller = try peer.status().controller
        XCTAssertEqual(controller["hci_client_connected"] as? Bool, false)
        let sensors = try peer.status().sensors
        XCTAssertEqual(sensors.filter { $0["connected"] as? Bool == true }.count, 0)
    }

    // `gyrogate scan` lists the emulated sensors (the binary is built with the tests).
    func testGyrogateScanCommandListsSensors() throws {
        let peer = try requirePeer()
        let bundle = Bundle(for: Self.self).bundleURL
        let candidates = [bundle.appendingPathComponent("gyrogate"), bundle.deletingLastPathComponent().appendingPathComponent("gyrogate"),
                          MetaWearPeer.packageRoot.appendingPathComponent(".build/debug/gyrogate")]
        guard let binary = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw XCTSkip("gyrogate binary not built next to the tests (\(candidates.map(\.path)))")
        }
        let process = Process()
        process.executableURL = binary
        process.arguments = ["scan", "--transport", peer.transportSpec, "--seconds", "1.5", "--json"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        let list = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        XCTAssertEqual(list.count, Self.sensorCount)
        XCTAssertTrue(list.allSatisfy { $0["name"] as? String == "MetaWear" && $0["metawear"] as? Bool == true })
        XCTAssertEqual(list.first?["address"] as? String, "C4:BE:84:00:00:01")
    }
}
