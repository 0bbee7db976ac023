import CHCISocket
import Glibc
import Logging
import PosixThreads

/// Opens a transport from the configuration's `bluetooth.transport` string.
public enum TransportFactory {
    /// Opens `spec`:
    /// - `hci:N`: the kernel's HCI user channel on adapter N (needs CAP_NET_ADMIN); an adapter
    ///   that is up is brought down first unless `takeAdapter` is false (`gyrogate doctor`);
    /// - `tcp:HOST:PORT`: H4 over TCP (an emulator such as bumble, or a network bridge);
    /// - `serial:/dev/X:BAUD`: H4 over a UART with RTS/CTS flow control.
    ///
    /// Its packets are read and handled on `loop`.
    ///
    /// - throws: ``TransportError`` naming the failed call, `errno` and what to do.
    public static func open(_ spec: String, takeAdapter: Bool = true, loop: ThreadExecutor = .dataPlane,
                            logger: Logger) async throws -> any HCITransport {
        let parts = spec.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw invalid(spec) }
        let rest = String(parts[1])
        switch parts[0] {
        case "hci":
            guard let index = UInt16(rest) else { throw invalid(spec) }
            return try UserChannel.open(adapter: index, spec: spec, takeAdapter: takeAdapter, loop: loop, logger: logger)
        case "tcp":
            guard let colon = rest.lastIndex(of: ":"), let port = UInt16(rest[rest.index(after: colon)...]) else {
                throw invalid(spec)
            }
            var host = String(rest[..<colon])
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            guard !host.isEmpty else { throw invalid(spec) }
            return try TCPConnector.open(host: host, port: port, spec: spec, loop: loop, logger: logger)
        case "serial":
            guard let colon = rest.lastIndex(of: ":"), let baud = Int32(rest[rest.index(after: colon)...]) else {
                throw invalid(spec)
            }
            return try SerialPort.open(path: String(rest[..<colon]), baud: baud, spec: spec, loop: loop, logger: logger)
        default:
            throw invalid(spec)
        }
    }

    /// Whether kernel adapter `hciN` is up (nil: no such adapter, or no Bluetooth in this kernel).
    public static func adapterIsUp(_ adapter: UInt16) -> Bool? {
        switch chci_adapter_is_up(adapter) {
        case 1: true
        case 0: false
        default: nil
        }
    }

    static func invalid(_ spec: String) -> TransportError {
        TransportError(kind: .invalidSpecification, transport: spec, operation: "parse",
                       hint: "expected hci:N, tcp:HOST:PORT or serial:/dev/DEVICE:BAUD")
    }
}
