import Foundation
import MQTTPublisher
import TestSupport
import XCTest

/// A broker that speaks only MQTT 3.1.1: the publisher falls back from v5.
final class ProtocolFallbackTests: XCTestCase {
    func testFallsBackToMQTT311WhenTheBrokerRefusesV5() async throws {
        let broker = try FakeMQTT311Broker()
        let gateway = try Gateway(port: broker.port)
        gateway.start()
        let connected = await eventually(timeout: 10) { await gateway.publisher.status.state == .connected }
        XCTAssertTrue(connected)
        let status = await gateway.publisher.status
        XCTAssertEqual(status.protocolVersion, "3.1.1")
        XCTAssertGreaterThanOrEqual(status.connectionFailures, 1)
        XCTAssertEqual(broker.levels.prefix(1), [5])
        XCTAssertEqual(broker.levels.last, 4)
        gateway.task?.cancel()
        await gateway.task?.value
        broker.close()
    }
}

/// Accepts connections; answers a v5 CONNECT with a 3.1.1 CONNACK "unacceptable protocol
/// version" and a 3.1.1 CONNECT with "accepted", then reads and ignores everything.
final class FakeMQTT311Broker: @unchecked Sendable {
    let port: Int
    let listener: Int32
    private let lock = NSLock()
    private var seenLevels: [UInt8] = []
    var levels: [UInt8] { lock.withLock { seenLevels } }

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        port = Int(UInt16(bigEndian: address.sin_port))
        listener = fd
        listen(fd, 8)
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            let thread = Thread { [self] in serve(client) }
            thread.start()
        }
    }

    private func serve(_ client: Int32) {
        defer { Glibc.close(client) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(client, &buffer, buffer.count)
        // CONNECT: 0x10, remaining length (varint), 00 04 "MQTT", protocol level.
        guard count > 9, buffer[0] == 0x10 else { return }
        var index = 1
        while buffer[index] & 0x80 != 0 { index += 1 }
        let level = buffer[index + 7]
        lock.withLock { seenLevels.append(level) }
        let reply: [UInt8] = level == 4 ? [0x20, 0x02, 0x00, 0x00] : [0x20, 0x02, 0x00, 0x01]
        _ = write(client, reply, reply.count)
        guard level == 4 else { return }
        while read(client, &buffer, buffer.count) > 0 {}
    }

    func close() {
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
    }
}
