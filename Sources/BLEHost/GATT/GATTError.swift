import ATT

/// Why a GATT procedure failed.
public enum GATTError: Error, Equatable, Sendable {
    /// The server answered with an ATT Error Response (the peer's verdict).
    case attError(code: ATTErrorCode, handle: UInt16, request: String)
    /// No response within the ATT timeout; per spec the bearer is then unusable (peer fault).
    case timeout(request: String, after: Duration)
    /// The link went down (or was already down) during the request.
    case disconnected(request: String)
    /// The server answered with a PDU that does not match the request, or cannot be decoded (peer fault).
    case unexpectedResponse(request: String, detail: String)
    /// The characteristic cannot do what was asked (no notify/indicate property, no CCCD).
    case notSupported(String)
    /// A value too long for the procedure (e.g. a Write Command over ATT_MTU - 3).
    case valueTooLong(length: Int, maximum: Int)
}

extension GATTError: CustomStringConvertible {
    public var description: String {
        switch self {
        case let .attError(code, handle, request):
            return "\(request) on handle 0x\(String(handle, radix: 16, uppercase: false)) failed: \(code)"
        case let .timeout(request, after):
            return "\(request): no ATT response within \(after); the peer is unresponsive, reconnect"
        case let .disconnected(request):
            return "\(request): link down"
        case let .unexpectedResponse(request, detail):
            return "\(request): unexpected response from the peer: \(detail)"
        case let .notSupported(text):
            return text
        case let .valueTooLong(length, maximum):
            return "value of \(length) bytes is longer than \(maximum) allowed; exchange a larger MTU or write with response"
        }
    }
}
