import BLEHost
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
            await transport.close()
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
        await controller.close()
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
