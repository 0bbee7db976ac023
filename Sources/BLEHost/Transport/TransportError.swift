import Glibc

/// Why a transport could not be opened or stopped working, with what to do about it.
public struct TransportError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What kind of failure, for code that reacts to it.
    public enum Kind: Equatable, Sendable {
        /// The transport string is not `hci:N`, `tcp:HOST:PORT` or `serial:PATH:BAUD`.
        case invalidSpecification
        /// A system call failed; `errno` is in ``TransportError/errorNumber``.
        case systemCall
        /// The controller side closed the link.
        case closed
    }

    public var kind: Kind
    /// The transport, as given (`hci:0`, `tcp:127.0.0.1:7000`).
    public var transport: String
    /// The failing call (`socket`, `bind`, `connect`, `open`, `read`, `write`, `tcsetattr`).
    public var operation: String
    /// `errno`, when a system call failed.
    public var errorNumber: Int32?
    /// What a person can do about it.
    public var hint: String?

    public init(kind: Kind, transport: String, operation: String, errorNumber: Int32? = nil, hint: String? = nil) {
        self.kind = kind
        self.transport = transport
        self.operation = operation
        self.errorNumber = errorNumber
        self.hint = hint
    }

    /// `strerror` of ``errorNumber``.
    public var errorText: String? {
        errorNumber.map { String(cString: strerror($0)) }
    }

    public var description: String {
        var text = "transport \(transport): \(operation) failed"
        if let errorNumber, let errorText { text += ": \(errorText) (errno \(errorNumber))" }
        if let hint { text += "; \(hint)" }
        return text
    }
}
