import BLEHost
import CHCISocket
import Glibc
import HCI
import Logging
import XCTest

/// Transport opening and its errors. This machine's kernel has no Bluetooth, so the user
/// channel's error path is what can be tested here; the radio path runs over H4/TCP.
final class TransportTests: XCTestCase {
    let logger = Logger(label: "test")

    func testMalformedSpecificationsAreRejectedWithTheExpectedForms() async {
        for spec in ["", "hci", "hci:x", "tcp:127.0.0.1", "tcp::80", "serial:/dev/ttyACM0", "usb:1", "tcp:host:99999"] {
            do {
                _ = try await TransportFactory.open(spec, logger: logger)
                XCTFail("\(spec) opened")
            } catch let error as TransportError {
                XCTAssertEqual(error.kind, .invalidSpecification, spec)
                XCTAssertTrue(error.description.contains("expected hci:N, tcp:HOST:PORT or serial:/dev/DEVICE:BAUD"), "\(error)")
            } catch {
                XCTFail("\(spec): \(error)")
            }
        }
    }

    func testUserChannelFailureNamesTheCallErrnoAndRemedy() async {
        do {
            let transport = try await TransportFactory.open("hci:0", logger: logger)
            // A machine with Bluetooth and the rights: nothing to check here.
            transport.close()
        } catch let error as TransportError {
            XCTAssertEqual(error.kind, .systemCall)
            XCTAssertNotNil(error.errorNumber)
            XCTAssertNotNil(error.hint, "\(error)")
            XCTAssertTrue(["socket", "bind"].contains(error.operation))
            if error.errorNumber == EAFNOSUPPORT {
                XCTAssertEqual(error.operation, "socket")
                XCTAssertTrue(error.description.contains("no Bluetooth support"), "\(error)")
                XCTAssertTrue(error.description.contains("errno \(EAFNOSUPPORT)"), "\(error)")
            }
        } catch {
            XCTFail("\(error)")
        }
    }

    /// The adapter's state through the kernel's HCI ioctls: none here without Bluetooth (the VM
    /// suite, Tests/VM, has an adapter and takes it when it is up).
    func testAdapterStateWithoutBluetoothIsUnknown() {
        var probe = Glibc.socket(31, Int32(SOCK_RAW.rawValue), 1)  // AF_BLUETOOTH, BTPROTO_HCI
        if probe >= 0 { close(probe); probe = -1 }
        if errno == EAFNOSUPPORT {
            XCTAssertNil(TransportFactory.adapterIsUp(0))
            XCTAssertEqual(chci_adapter_down(0), -1)
            XCTAssertEqual(errno, EAFNOSUPPORT)
        }
        XCTAssertNil(TransportFactory.adapterIsUp(0xFFF0), "no such adapter")
    }

    /// The user channel's buffer must hold a paced read's batch; the same call on a socket this
    /// machine has shows that the limit is raised past the system's default (as root, past
    /// net.core.rmem_max too).
    func testReceiveBufferIsRaisedForBatchedReads() throws {
        var pair: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0, &pair), 0)
        defer { pair.forEach { _ = close($0) } }
        var before: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        XCTAssertEqual(getsockopt(pair[0], SOL_SOCKET, SO_RCVBUF, &before, &length), 0)
        let after = chci_grow_receive_buffer(pair[0], 4 << 20)
        XCTAssertGreaterThan(after, before)
        // The kernel keeps twice what is asked (socket(7)); without CAP_NET_ADMIN, SO_RCVBUFFORCE
        // is refused with EPERM and SO_RCVBUF caps the request at net.core.rmem_max.
        var size: Int32 = 4 << 20
        let forced = setsockopt(pair[1], SOL_SOCKET, SO_RCVBUFFORCE, &size, socklen_t(MemoryLayout<Int32>.size))
        let forceErrno = errno
        let rmemMax = (try? String(contentsOfFile: "/proc/sys/net/core/rmem_max", encoding: .utf8))
            .flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        if geteuid() == 0 {
            XCTAssertGreaterThanOrEqual(after, 4 << 20, "as root, past net.core.rmem_max")
            XCTAssertEqual(forced, 0, "root may force the size: errno \(forceErrno)")
        } else {
            XCTAssertEqual(forced, -1, "SO_RCVBUFFORCE needs CAP_NET_ADMIN")
            XCTAssertEqual(forceErrno, EPERM, "refused for want of privilege, not for a bad argument")
            if let rmemMax {
                XCTAssertEqual(after, 2 * min(4 << 20, rmemMax), "the request capped at net.core.rmem_max (\(rmemMax)), doubled")
            }
        }
        XCTAssertEqual(chci_grow_receive_buffer(-1, 4 << 20), -1, "a bad descriptor is an error, not a size")
    }

    func testTCPRefusedSaysNothingListens() async throws {
        // Bind a port and close it so nothing listens there.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        let port = UInt16(bigEndian: address.sin_port)
        close(fd)
        do {
            _ = try await TransportFactory.open("tcp:127.0.0.1:\(port)", logger: logger)
            XCTFail("connected to a closed port")
        } catch let error as TransportError {
            XCTAssertEqual(error.operation, "connect")
            XCTAssertEqual(error.errorNumber, ECONNREFUSED)
            XCTAssertTrue(error.description.contains("nothing listens"), "\(error)")
        }
    }

    func testSerialOpenOfMissingDeviceExplains() async {
        do {
            _ = try await TransportFactory.open("serial:/dev/gyrogate-no-such-tty:1000000", logger: logger)
            XCTFail("opened a missing device")
        } catch let error as TransportError {
            XCTAssertEqual(error.operation, "open")
            XCTAssertEqual(error.errorNumber, ENOENT)
            XCTAssertNotNil(error.hint)
        } catch {
            XCTFail("\(error)")
        }
    }

    func testSerialOnANonTTYFailsInTermios() async {
        do {
            _ = try await TransportFactory.open("serial:/dev/null:115200", logger: logger)
            XCTFail("configured /dev/null as a UART")
        } catch let error as TransportError {
            XCTAssertEqual(error.operation, "tcsetattr")
            XCTAssertTrue(error.description.contains("not a serial device"), "\(error)")
        } catch {
            XCTFail("\(error)")
        }
    }

    func testHostOverAClosedTransportFailsStartWithoutHanging() async throws {
        let controller = InMemoryController()
        controller.close()
        var configuration = BLEHostConfiguration()
        configuration.resetTimeout = .milliseconds(300)
        let host = BLEHost(transport: controller, configuration: configuration, logger: logger)
        do {
            try await host.start()
            XCTFail("started without a controller")
        } catch let error as BLEHostError {
            XCTAssertTrue("\(error)".count > 10)
        }
        let status = await host.status()
        XCTAssertEqual(status.state, .failed)
    }
}

/// The serial transport's real path over a pseudo-terminal: raw mode (no echo, no CR/LF
/// translation, all 256 octet values) and H4 framing both ways.
final class SerialTransportTests: XCTestCase {
    func testH4OverAPseudoTerminal() async throws {
        // posix_openpt/ptsname are not imported by Swift's Glibc: /dev/ptmx with the two ioctls
        // they wrap (TIOCSPTLCK unlock, TIOCGPTN number).
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard master >= 0, ioctl(master, 0x4004_5431, &unlock) == 0, ioctl(master, 0x8004_5430, &number) == 0 else {
            throw XCTSkip("no pseudo-terminals here (errno \(errno))")
        }
        defer { close(master) }
        let path = "/dev/pts/\(number)"
        let transport = try await TransportFactory.open("serial:\(path):1000000", logger: Logger(label: "test"))
        let (stream, sink) = AsyncStream.makeStream(of: H4Packet.self)
        transport.start(receive: { next in
            while let packet = next() { sink.yield(H4Packet(type: packet.type, bytes: Array(packet.bytes)[...])) }
        }, ended: { _ in sink.finish() })
        var packets = stream.makeAsyncIterator()

        // Host -> controller: an HCI Reset command, bytes that a cooked tty would mangle included.
        let command = H4Packet(type: .command, bytes: [0x03, 0x0C, 0x00][...])
        try transport.send(command)
        let acl = H4Packet(type: .aclData, bytes: [0x40, 0x20, 0x05, 0x00, 0x0D, 0x0A, 0x03, 0x11, 0x7F][...])
        try transport.send(acl)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        let deadline = ContinuousClock.now + .seconds(2)
        while received.count < 14, ContinuousClock.now < deadline {
            var pfd = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 100) > 0 else { continue }
            let count = read(master, &buffer, buffer.count)
            if count > 0 { received += buffer[0..<count] }
        }
        XCTAssertEqual(received, command.h4Bytes + acl.h4Bytes)

        // Controller -> host: a Command Complete split across two writes, then an event with 0x0d/0x0a.
        let complete: [UInt8] = [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]
        _ = complete[0..<3].withUnsafeBytes { write(master, $0.baseAddress!, 3) }
        // why: the pause between the writes is what splits the event across the transport's reads; nothing tells when it read the first part.
        try await Task.sleep(for: .milliseconds(20))
        _ = complete[3...].withUnsafeBytes { write(master, $0.baseAddress!, 4) }
        let status: [UInt8] = [0x04, 0x0F, 0x04, 0x0D, 0x0A, 0x0D, 0x20]
        _ = status.withUnsafeBytes { write(master, $0.baseAddress!, status.count) }
        let first = await packets.next()
        XCTAssertEqual(first?.h4Bytes, complete)
        let second = await packets.next()
        XCTAssertEqual(second?.h4Bytes, status)
        transport.close()
    }
}

/// Waiting for an adapter to come back: without kernel Bluetooth (here) or for another
/// transport it is the whole timeout; the VM suite (Tests/VM, scenario c) sees it end early.
final class AdapterEventsTests: XCTestCase {
    func testWithoutAdapterEventsTheWaitIsTheTimeout() async throws {
        for spec in ["hci:0", "tcp:127.0.0.1:1"] {
            let started = ContinuousClock.now
            try await AdapterEvents.waitForAdapter(spec, upTo: .milliseconds(50))
            XCTAssertGreaterThanOrEqual(ContinuousClock.now - started, .milliseconds(50), spec)
        }
    }
}
