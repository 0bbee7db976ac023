/// Rebuilds L2CAP frames from the ACL fragments of one connection, Core v5.4, Vol 4, Part E,
/// 5.4.2 and Vol 3, Part A, 7.2.
///
/// Design: a start fragment's first two octets are the L2CAP length, so the frame's total size
/// (length + 4) is known as soon as two octets have arrived. A start fragment that already holds
/// the whole frame is returned without copying; otherwise fragments are appended into one
/// buffer. Every protocol violation resets the state and is reported in the result, so a caller
/// can log and count it; nothing throws and nothing traps.
///
/// One instance per connection; call ``reset()`` when the connection goes down.
public struct ACLReassembler: Sendable {
    /// The largest L2CAP frame accepted, header included. A peer chooses how much a partial frame
    /// holds, so this bounds the memory it controls. The default, 1024, covers the largest ATT
    /// frame (ATT_MTU 517 + 4-octet L2CAP header) with room to spare.
    public let maximumFrameLength: Int

    @usableFromInline
    enum State: Sendable {
        case idle
        /// Collecting a frame; `expected` is nil until the L2CAP length has arrived.
        case collecting(buffer: [UInt8], expected: Int?)
        /// Swallowing the continuations of a frame already reported as too long.
        case discarding
    }

    @usableFromInline var state: State = .idle

    /// What one fragment produced: a complete frame, a reported drop, both, or neither.
    public struct Output: Equatable, Sendable {
        /// A complete L2CAP frame (header included).
        public var frame: ArraySlice<UInt8>?
        /// Bytes dropped while handling this fragment.
        public var dropped: ACLReassemblyError?

        public init(frame: ArraySlice<UInt8>? = nil, dropped: ACLReassemblyError? = nil) {
            self.frame = frame
            self.dropped = dropped
        }
    }

    public init(maximumFrameLength: Int = 1024) {
        precondition(maximumFrameLength >= 4, "an L2CAP frame has a 4-byte header")
        self.maximumFrameLength = maximumFrameLength
    }

    /// Whether no frame is in progress.
    public var isIdle: Bool {
        if case .idle = state { return true }
        return false
    }

    /// Forgets any partial frame (on disconnection).
    public mutating func reset() {
        state = .idle
    }

    /// Handles one fragment of this connection.
    public mutating func push(_ packet: ACLPacket) -> Output {
        var dropped: ACLReassemblyError?
        let frame = push(packet, dropped: &dropped)
        return Output(frame: frame, dropped: dropped)
    }

    /// ``push(_:)`` for the data path: returns the complete frame, if any, and sets `dropped`
    /// when bytes were dropped. (An `Output` is copied on its way out, and with it the frame's
    /// buffer reference, on every packet.)
    ///
    /// Inlined into the host for the common case, a start fragment that holds its whole frame
    /// while nothing is in progress: handed back as a slice of the packet.
    @inlinable @inline(__always)
    public mutating func push(_ packet: ACLPacket, dropped: inout ACLReassemblyError?) -> ArraySlice<UInt8>? {
        if packet.packetBoundary.isStart, case .idle = state, packet.data.count >= 2 {
            let data = packet.data
            let total = (Int(data[data.startIndex]) | Int(data[data.startIndex + 1]) << 8) + 4
            if data.count == total, total <= maximumFrameLength { return data }
        }
        return reassemble(packet, dropped: &dropped)
    }

    @usableFromInline
    mutating func reassemble(_ packet: ACLPacket, dropped: inout ACLReassemblyError?) -> ArraySlice<UInt8>? {
        if packet.packetBoundary.isStart {
            if case let .collecting(buffer, expected) = state {
                dropped = .interruptedFrame(handle: packet.handle, received: buffer.count, expected: expected)
                state = .idle
            } else if case .discarding = state {
                state = .idle
            }
            let data = packet.data
            if data.count >= 2 {
                let total = (Int(data[data.startIndex]) | Int(data[data.startIndex + 1]) << 8) + 4
                if data.count == total, total <= maximumFrameLength { return data }
            }
            return collect(data, into: [], expected: nil, handle: packet.handle, dropped: &dropped)
        }
        switch state {
        case .idle:
            dropped = .continuationWithoutStart(handle: packet.handle, length: packet.data.count)
        case .discarding:
            break
        case let .collecting(buffer, expected):
            state = .idle  // release the buffer so appending does not copy it
            return collect(packet.data, into: buffer, expected: expected, handle: packet.handle, dropped: &dropped)
        }
        return nil
    }

    private mutating func collect(_ data: ArraySlice<UInt8>, into buffer: consuming [UInt8], expected: Int?,
                                  handle: UInt16, dropped: inout ACLReassemblyError?) -> ArraySlice<UInt8>? {
        var buffer = buffer
        var expected = expected
        buffer.append(contentsOf: data)
        if expected == nil, buffer.count >= 2 {
            let total = (Int(buffer[0]) | Int(buffer[1]) << 8) + 4
            guard total <= maximumFrameLength else {
                state = .discarding
                dropped = .frameTooLong(handle: handle, frameLength: total, limit: maximumFrameLength)
                return nil
            }
            expected = total
        }
        if let total = expected {
            if buffer.count == total {
                state = .idle
                return buffer[...]
            }
            if buffer.count > total {
                state = .idle
                dropped = .overflow(handle: handle, received: buffer.count, expected: total)
                return nil
            }
        }
        state = .collecting(buffer: buffer, expected: expected)
        return nil
    }
}
