/// Why ``ACLReassembler`` dropped bytes. Each case names the connection handle; all of them are
/// the peer's or the controller's fault, and the reassembler has already recovered.
public enum ACLReassemblyError: Error, Equatable, Sendable {
    /// A continuing fragment arrived with no frame in progress; it was dropped.
    case continuationWithoutStart(handle: UInt16, length: Int)
    /// A new frame started before the previous one was complete; the partial frame was dropped.
    case interruptedFrame(handle: UInt16, received: Int, expected: Int?)
    /// The L2CAP length announces a frame over the limit; the frame and its continuations are dropped.
    case frameTooLong(handle: UInt16, frameLength: Int, limit: Int)
    /// Fragments carried more bytes than the L2CAP length announced; the frame was dropped.
    case overflow(handle: UInt16, received: Int, expected: Int)
}

extension ACLReassemblyError: CustomStringConvertible {
    public var description: String {
        switch self {
        case let .continuationWithoutStart(handle, length):
            return "ACL handle 0x\(String(handle, radix: 16)): dropped a \(length)-byte continuing fragment with no frame in progress"
        case let .interruptedFrame(handle, received, expected):
            let of = expected.map { " of \($0)" } ?? ""
            return "ACL handle 0x\(String(handle, radix: 16)): new frame started after \(received)\(of) bytes; dropped the partial frame"
        case let .frameTooLong(handle, frameLength, limit):
            return "ACL handle 0x\(String(handle, radix: 16)): L2CAP frame of \(frameLength) bytes exceeds the \(limit)-byte limit; dropped"
        case let .overflow(handle, received, expected):
            return "ACL handle 0x\(String(handle, radix: 16)): fragments carried \(received) bytes for a \(expected)-byte L2CAP frame; dropped"
        }
    }
}
