import BluetoothWire
import HCI

/// Why a ``BLEHost`` operation failed. Each description says who is at fault and what to try.
public enum BLEHostError: Error, Equatable, Sendable {
    /// ``BLEHost/start()`` has not completed, or the host was stopped.
    case notReady(state: String)
    /// The transport failed or closed.
    case transport(TransportError)
    /// The controller answered a command with an error status.
    case commandFailed(opcode: HCIOpcode, status: HCIStatus)
    /// The controller never answered a command within its deadline (controller fault).
    case commandTimeout(opcode: HCIOpcode, after: Duration)
    /// The controller answered with something this host cannot decode (controller fault).
    case malformedResponse(opcode: HCIOpcode, reason: String)
    /// No connection within the timeout; the attempt was cancelled.
    case connectTimeout(address: BluetoothAddress, after: Duration)
    /// The controller reported the connection attempt failed.
    case connectFailed(address: BluetoothAddress, status: HCIStatus)
    /// Another scan or connection attempt is running (the controller allows one at a time).
    case busy(String)
    /// ``BLEHostConfiguration/maximumConnections`` are open.
    case tooManyConnections(limit: Int)
    /// Already connected to this address.
    case alreadyConnected(BluetoothAddress, handle: UInt16)
    /// The link is down; `reason` is the controller's disconnection reason.
    case disconnected(handle: UInt16, reason: HCIStatus)
    /// A parameter is out of the spec's range (our caller's fault).
    case invalidParameter(String)
    /// The operation was cancelled (task cancellation or host stop).
    case cancelled
}

extension BLEHostError: CustomStringConvertible {
    public var description: String {
        switch self {
        case let .notReady(state):
            return "BLE host is not ready (\(state)); call start() first"
        case let .transport(error):
            return "\(error)"
        case let .commandFailed(opcode, status):
            return "controller rejected \(opcode): \(status)"
        case let .commandTimeout(opcode, after):
            return "controller did not answer \(opcode) within \(after) (controller fault; is the transport right and the controller alive?)"
        case let .malformedResponse(opcode, reason):
            return "controller answered \(opcode) with a malformed response: \(reason)"
        case let .connectTimeout(address, after):
            return "no connection to \(address) within \(after): the sensor is out of range, off, or connected elsewhere"
        case let .connectFailed(address, status):
            return "connection to \(address) failed: \(status)"
        case let .busy(what):
            return "controller busy: \(what) in progress; retry when it ends"
        case let .tooManyConnections(limit):
            return "already \(limit) connections (bluetooth.maxSensors); disconnect one first"
        case let .alreadyConnected(address, handle):
            return "already connected to \(address) (handle 0x\(String(handle, radix: 16)))"
        case let .disconnected(handle, reason):
            return "link 0x\(String(handle, radix: 16)) is down: \(reason)"
        case let .invalidParameter(text):
            return "invalid parameter: \(text)"
        case .cancelled:
            return "cancelled"
        }
    }
}
