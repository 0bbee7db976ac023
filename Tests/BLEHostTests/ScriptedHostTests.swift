import ATT
import BluetoothWire
import HCI
import L2CAP
import Logging
import XCTest
@testable import BLEHost

/// Host behaviour the bumble peer cannot provoke, against the scripted in-memory controller.
final class ScriptedHostTests: XCTestCase {
    var controller: InMemoryController!
    var host: BLEHost!
    var connection: LEConnection!

    override func setUp() async throws {
        controller = InMemoryController()
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        var configuration = BLEHostConfiguration()
        configuration.attRequestTimeout = .milliseconds(300)
        host = BLEHost(transport: controller, configuration: configuration, logger: logger)
        try await host.start()
        connection = try await host.connect(to: try BluetoothAddress(parsing: "C4:BE:84:00:00:01"), addressType: .public)
        _ = controller.takeSent()
    }

    override func tearDown() async throws {
        await host.stop()
    }

    /// Injects one unfragmented L2CAP frame on handle 0x0040.
    func injectFrame(channel: UInt16, _ payload: [UInt8], handle: UInt16 = 0x40) {
        let frame = L2CAPBasicFrame(channelID: L2CAPChannelID(rawValue: channel), payload: payload).encode()
        controller.inject(ACLPacket(handle: handle, packetBoundary: .firstFlushable, data: frame).h4Bytes())
    }

    /// Waits until `condition` holds for what the host sent to `controller` (each packet wakes it).
    func waitFor(_ condition: () -> Bool) async throws {
        await controller.waitForSent(condition)
    }

    func testRemoteConnectionParameterRequestIsRepliedOrRefused() async throws {
        let valid = LERemoteConnectionParameterRequestEvent(connectionHandle: 0x40, intervalMin: 12, intervalMax: 24,
                                                            maxLatency: 0, timeout: 400)
        controller.inject(HCIEvent.leMeta(.remoteConnectionParameterRequest(valid)).h4Bytes())
        try await waitFor { !controller.commands(.leRemoteConnectionParameterRequestReply).isEmpty }
        let reply = try LERemoteConnectionParameterRequestReplyCommand(
            decoding: [0x20, 0x20, 14] + XCTUnwrap(controller.commands(.leRemoteConnectionParameterRequestReply).first))
        XCTAssertEqual(reply.connectionHandle, 0x40)
        XCTAssertEqual(reply.connectionParameters.connectionIntervalMax, 24)

        let invalid = LERemoteConnectionParameterRequestEvent(connectionHandle: 0x40, intervalMin: 3200, intervalMax: 3200,
                                                              maxLatency: 10, timeout: 100)
        controller.inject(HCIEvent.leMeta(.remoteConnectionParameterRequest(invalid)).h4Bytes())
        try await waitFor { !controller.commands(.leRemoteConnectionParameterRequestNegativeReply).isEmpty }
        XCTAssertEqual(controller.commands(.leRemoteConnectionParameterRequestNegativeReply).first, [0x40, 0x00, 0x3B])
        let status = await host.status()
        XCTAssertEqual(status.parameterRequestsAccepted, 1)
        XCTAssertEqual(status.parameterRequestsRejected, 1)
    }

    func testL2CAPParameterUpdateIsAnsweredThenApplied() async throws {
        injectFrame(channel: 5, [0x12, 0x07, 0x08, 0x00, 0x06, 0x00, 0x0C, 0x00, 0x00, 0x00, 0xF4, 0x01])
        try await waitFor { !controller.commands(.leConnectionUpdate).isEmpty }
        let response = controller.l2capFrames().first { $0.channel == 5 }
        XCTAssertEqual(response?.payload, [0x13, 0x07, 0x02, 0x00, 0x00, 0x00]) // accepted, same identifier
        XCTAssertEqual(controller.commands(.leConnectionUpdate).first?.prefix(6), [0x40, 0x00, 0x06, 0x00, 0x0C, 0x00])
    }

    func testUnknownSignalGetsCommandReject() async throws {
        injectFrame(channel: 5, [0x0A, 0x09, 0x02, 0x00, 0x02, 0x00]) // Information Request: BR/EDR only
        try await waitFor { controller.l2capFrames().contains { $0.channel == 5 } }
        XCTAssertEqual(controller.l2capFrames().first { $0.channel == 5 }?.payload, [0x01, 0x09, 0x02, 0x00, 0x00, 0x00])
    }

    func testPeerRequestsAreAnsweredAndIndicationsConfirmed() async throws {
        injectFrame(channel: 4, [0x0A, 0x03, 0x00]) // Read Request: we have no server
        injectFrame(channel: 4, [0x02, 0x00, 0x02]) // Exchange MTU Request, 512
        injectFrame(channel: 4, [0x1D, 0x11, 0x00, 0xAB]) // indication
        try await waitFor { controller.l2capFrames().count >= 3 }
        let frames = controller.l2capFrames().filter { $0.channel == 4 }.map(\.payload)
        XCTAssertEqual(frames, [[0x01, 0x0A, 0x03, 0x00, 0x06], [0x03, 0xF7, 0x00], [0x1E]])
        let mtu = await connection.gatt.mtu
        XCTAssertEqual(mtu, 247)
    }

    func testATTErrorResponseBecomesTypedError() async throws {
        let characteristic = GATTCharacteristic(uuid: BluetoothUUID(uuid16: 0x2A29), declarationHandle: 0x10, valueHandle: 0x11,
                                                endHandle: 0x11, properties: [.read])
        let gatt = connection.gatt
        let read = Task { try await gatt.read(characteristic) }
        try await waitFor { controller.l2capFrames().contains { $0.payload.first == 0x0A } }
        injectFrame(channel: 4, [0x01, 0x0A, 0x11, 0x00, 0x02])
        do {
            _ = try await read.value
            XCTFail("read succeeded")
        } catch let error as GATTError {
            XCTAssertEqual(error, .attError(code: .readNotPermitted, handle: 0x11, request: "Read 0x11"))
            XCTAssertTrue("\(error)".contains("Read 0x11 on handle 0x11 failed"), "\(error)")
        }
    }

    func testRequestTimeoutMakesTheBearerUnusable() async throws {
        let characteristic = GATTCharacteristic(uuid: BluetoothUUID(uuid16: 0x2A29), declarationHandle: 0x10, valueHandle: 0x11,
                                                endHandle: 0x11, properties: [.read])
        do {
            _ = try await connection.gatt.read(characteristic)
            XCTFail("read succeeded without a response")
        } catch let error as GATTError {
            XCTAssertEqual(error, .timeout(request: "Read 0x11", after: .milliseconds(300)))
        }
        do {
            _ = try await connection.gatt.read(characteristic)
            XCTFail("second read succeeded")
        } catch let error as GATTError {
            guard case .timeout = error else { return XCTFail("\(error)") }
        }
    }

    func testDisconnectionFailsPendingRequestFinishesStreamsAndReturnsCredits() async throws {
        let characteristic = GATTCharacteristic(uuid: BluetoothUUID(uuid16: 0x2A29), declarationHandle: 0x10, valueHandle: 0x11,
                                                endHandle: 0x13, properties: [.read, .notify])
        let (notifications, sink) = AsyncStream.makeStream(of: [UInt8].self)
        _ = try connection.gatt.bearer.subscribe(handle: 0x11, NotificationSubscriber(value: { sink.yield(Array($0)) },
                                                                                      ended: { sink.finish() }))
        injectFrame(channel: 4, [0x1B, 0x11, 0x00, 0x01, 0x02])
        let collected = Task { var values: [[UInt8]] = []; for await value in notifications { values.append(value) }; return values }
        let gatt = connection.gatt
        let read = Task { try await gatt.read(characteristic) }
        try await waitFor { controller.l2capFrames().contains { $0.payload.first == 0x0A } }
        controller.inject(HCIEvent.disconnectionComplete(DisconnectionCompleteEvent(status: .success, connectionHandle: 0x40,
                                                                                    reason: .connectionTimeout)).h4Bytes())
        do {
            _ = try await read.value
            XCTFail("read survived the disconnection")
        } catch let error as GATTError {
            XCTAssertEqual(error, .disconnected(request: "Read 0x11"))
        }
        let values = await collected.value
        XCTAssertEqual(values, [[0x01, 0x02]])
        let reason = await connection.waitForDisconnection()
        XCTAssertEqual(reason, .connectionTimeout)
        let status = await host.status()
        XCTAssertEqual(status.connections.count, 0)
        XCTAssertEqual(status.aclBuffersAvailable, status.aclBufferCount)
    }

    func testAWakeUpsNotificationsComeInOneBatchAndBeforeTheLinksEnd() async throws {
        let (batches, sink) = AsyncStream.makeStream(of: [[UInt8]].self)
        _ = try connection.gatt.bearer.subscribe(handle: 0x11, NotificationSubscriber(batch: { sink.yield($0.map { Array($0) }) },
                                                                                      ended: { sink.yield([]); sink.finish() }))
        func notification(_ value: UInt8) -> [UInt8] {
            let frame = L2CAPBasicFrame(channelID: .att, payload: [0x1B, 0x11, 0x00, value]).encode()
            return ACLPacket(handle: 0x40, packetBoundary: .firstFlushable, data: frame).h4Bytes()
        }
        let disconnection = HCIEvent.disconnectionComplete(DisconnectionCompleteEvent(status: .success, connectionHandle: 0x40,
                                                                                      reason: .connectionTimeout)).h4Bytes()
        controller.injectTogether([notification(1), notification(2)])
        controller.injectTogether([notification(3), disconnection])
        var received: [[[UInt8]]] = []
        for await batch in batches { received.append(batch) }
        XCTAssertEqual(received, [[[1], [2]], [[3]], []], "one batch per wake-up, the last flushed before the end")
    }

    func testLostTransportEndsTheLinksThenTheHost() async throws {
        let cancelled = Task { [host] in try await host!.waitUntilEnded() }
        cancelled.cancel()
        do {
            _ = try await cancelled.value
            XCTFail("a cancelled wait returned")
        } catch is CancellationError {}
        let waiting = Task { [host] in try await host!.waitUntilEnded() }
        controller.close()  // the controller's side of the pipe goes away
        guard case let .transportLost(error) = try await waiting.value else { return XCTFail("host not lost") }
        XCTAssertEqual(error.kind, .closed)
        let linkUp = await connection.isConnected
        XCTAssertFalse(linkUp, "every link is down before the loss is reported")
        await host.stop()
        let end = try await host.waitUntilEnded()
        XCTAssertEqual(end, .transportLost(error), "the first end is kept")
    }

    func testCreditsAreNeverExceededAndQueuedPacketsDropOnDisconnect() async throws {
        // A controller that completes nothing: 4 buffers, then the rest must wait.
        let stingy = InMemoryController(completesACL: false)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let host = BLEHost(transport: stingy, logger: logger)
        try await host.start()
        let connection = try await host.connect(to: try BluetoothAddress(parsing: "C4:BE:84:00:00:02"), addressType: .public)
        let characteristic = GATTCharacteristic(uuid: BluetoothUUID(uuid16: 0x9001), declarationHandle: 0x10, valueHandle: 0x11,
                                                endHandle: 0x11, properties: [.writeWithoutResponse])
        for index in 0..<10 {
            try await connection.gatt.write(characteristic, [UInt8(index)] + [UInt8](repeating: 0, count: 19), withResponse: false)
        }
        // Each write is one 27-octet fragment (4 L2CAP + 3 ATT + 20 value): 4 go, 6 wait.
        var status = await host.status()
        XCTAssertEqual(status.aclPacketsSent, 4)
        XCTAssertEqual(status.aclBuffersAvailable, 0)
        XCTAssertEqual(status.connections.first?.aclQueued, 6)
        stingy.inject(HCIEvent.numberOfCompletedPackets(NumberOfCompletedPacketsEvent(
            entries: [.init(connectionHandle: 0x40, numCompletedPackets: 2)])).h4Bytes())
        // The two freed buffers take two of the queued writes: the controller receives them.
        await stingy.waitForSent { stingy.l2capFrames().count >= 6 }
        status = await host.status()
        XCTAssertEqual(status.aclPacketsSent, 6)
        stingy.inject(HCIEvent.disconnectionComplete(DisconnectionCompleteEvent(status: .success, connectionHandle: 0x40,
                                                                                reason: .connectionTimeout)).h4Bytes())
        _ = await connection.waitForDisconnection()
        status = await host.status()
        XCTAssertEqual(status.aclBuffersAvailable, 4)
        XCTAssertEqual(status.aclPacketsSent, 6)
        await host.stop()
    }

    func testCancellingAConnectTaskCancelsTheAttempt() async throws {
        let slow = InMemoryController(completesConnections: false)
        let host = BLEHost(transport: slow, logger: Logger(label: "test"))
        try await host.start()
        let address = try BluetoothAddress(parsing: "C4:BE:84:00:00:03")
        let attempt = Task { try await host.connect(to: address, addressType: .public, timeout: .seconds(30)) }
        await slow.waitForSent { !slow.commands(.leCreateConnection).isEmpty }
        attempt.cancel()
        do {
            _ = try await attempt.value
            XCTFail("connected")
        } catch let error as BLEHostError {
            XCTAssertEqual(error, .cancelled)
        }
        XCTAssertEqual(slow.commands(.leCreateConnectionCancel).count, 1)
        let status = await host.status()
        XCTAssertFalse(status.isConnecting)
        // The initiator is free again.
        do {
            _ = try await host.connect(to: address, addressType: .public, timeout: .milliseconds(100))
        } catch let error as BLEHostError {
            XCTAssertEqual(error, .connectTimeout(address: address, after: .milliseconds(100)))
        }
        await host.stop()
    }

    func testZeroCommandCreditsFailTheNextCommandInsteadOfHanging() async throws {
        let stingy = InMemoryController(zeroCreditOpcodes: [.leSetRandomAddress])
        var configuration = BLEHostConfiguration()
        configuration.commandTimeout = .milliseconds(200)
        let host = BLEHost(transport: stingy, configuration: configuration, logger: Logger(label: "test"))
        try await host.start()
        do {
            _ = try await host.scan(for: .milliseconds(10))
            XCTFail("scanned without a command credit")
        } catch let error as BLEHostError {
            XCTAssertEqual(error, .commandTimeout(opcode: .leSetScanParameters, after: .milliseconds(200)))
        }
        let status = await host.status()
        XCTAssertEqual(status.commandTimeouts, 1)
        XCTAssertTrue(stingy.commands(.leSetScanParameters).isEmpty, "sent without a credit")
        await host.stop()
    }
}
