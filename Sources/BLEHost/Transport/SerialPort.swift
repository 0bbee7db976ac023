import CHCISocket
import Glibc
import Logging
import PosixThreads

/// H4 over a UART: raw mode, the given baud rate, RTS/CTS hardware flow control.
enum SerialPort {
    static func open(path: String, baud: Int32, spec: String, loop: ThreadExecutor, logger: Logger) throws(TransportError) -> any HCITransport {
        let descriptor = Glibc.open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            let hint: String? = switch code {
            case ENOENT: "no such device; check the path (ls /dev/ttyACM* /dev/ttyUSB*)"
            case EACCES, EPERM: "no permission; add the user to the dialout group"
            case EBUSY: "the device is in use by another program (hciattach, btattach?)"
            default: nil
            }
            throw TransportError(kind: .systemCall, transport: spec, operation: "open", errorNumber: code, hint: hint)
        }
        let result = chci_configure_serial(descriptor, baud, 1)
        if result == -2 {
            close(descriptor)
            throw TransportError(kind: .invalidSpecification, transport: spec, operation: "tcsetattr",
                                 hint: "unsupported baud rate \(baud); use 115200, 460800, 921600, 1000000, 2000000 or 3000000")
        }
        if result != 0 {
            let code = errno
            close(descriptor)
            throw TransportError(kind: .systemCall, transport: spec, operation: "tcsetattr", errorNumber: code,
                                 hint: code == ENOTTY ? "\(path) is not a serial device" : nil)
        }
        logger.info("H4 serial transport open", metadata: ["subsystem": "ble", "transport": "\(spec)", "baud": "\(baud)"])
        return FileDescriptorTransport(descriptor: descriptor, name: spec, loop: loop, logger: logger)
    }
}
