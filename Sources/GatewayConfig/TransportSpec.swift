/// Where the Bluetooth controller is reached.
public enum TransportSpec: Sendable, Equatable, CustomStringConvertible {
    /// The kernel's HCI user channel on `hciN` (exclusive use of the adapter).
    case userChannel(adapter: Int)
    /// H4 over TCP, as exposed by emulators and remote controllers.
    case tcp(host: String, port: Int)
    /// H4 over a UART, e.g. an nRF52840 with HCI firmware.
    case serial(device: String, baud: Int)

    public static let baudRates = [9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600, 1000000, 2000000, 3000000]
    static let expected = "expected \"hci:N\", \"tcp:HOST:PORT\" or \"serial:/dev/DEVICE:BAUD\""

    /// Parses `hci:0`, `tcp:127.0.0.1:7001`, `serial:/dev/ttyACM0:1000000`; the error says why not.
    public static func parse(_ text: String) -> Result<TransportSpec, TransportSpecError> {
        guard let colon = text.firstIndex(of: ":") else { return .failure(.init("\"\(text)\" is not a transport; \(expected)")) }
        let scheme = text[..<colon], rest = String(text[text.index(after: colon)...])
        switch scheme {
        case "hci":
            guard let adapter = Int(rest), (0...15).contains(adapter) else {
                return .failure(.init("\"\(text)\": the adapter must be a number from 0 to 15 (hci:0)"))
            }
            return .success(.userChannel(adapter: adapter))
        case "tcp":
            guard let split = rest.lastIndex(of: ":"), !rest[..<split].isEmpty else {
                return .failure(.init("\"\(text)\": expected tcp:HOST:PORT"))
            }
            guard let port = Int(rest[rest.index(after: split)...]), (1...65535).contains(port) else {
                return .failure(.init("\"\(text)\": the port must be a number from 1 to 65535"))
            }
            return .success(.tcp(host: String(rest[..<split]), port: port))
        case "serial":
            guard let split = rest.lastIndex(of: ":"), rest.hasPrefix("/") else {
                return .failure(.init("\"\(text)\": expected serial:/dev/DEVICE:BAUD"))
            }
            guard let baud = Int(rest[rest.index(after: split)...]), baudRates.contains(baud) else {
                return .failure(.init("\"\(text)\": the baud rate must be one of \(baudRates.map(String.init).joined(separator: ", "))"))
            }
            return .success(.serial(device: String(rest[..<split]), baud: baud))
        default:
            return .failure(.init("\"\(text)\" is not a transport; \(expected)"))
        }
    }

    public var description: String {
        switch self {
        case .userChannel(let adapter): "hci:\(adapter)"
        case .tcp(let host, let port): "tcp:\(host):\(port)"
        case .serial(let device, let baud): "serial:\(device):\(baud)"
        }
    }
}

public struct TransportSpecError: Error, Sendable, Equatable {
    public var message: String
    init(_ message: String) { self.message = message }
}
