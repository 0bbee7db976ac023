/// The values one subscription received in one wake-up of the transport, in arrival order, as
/// one call: the receiver enters its actor once for all of them. The host reuses the storage
/// from wake-up to wake-up, so a batch is valid during the call only.
public struct NotificationBatch: Sendable, Sequence {
    private var bytes: [UInt8] = []
    /// Where each value ends in `bytes`.
    private var ends: [Int] = []

    public init() {}

    /// A batch of the one value, for links that deliver values one at a time.
    public init(_ value: ArraySlice<UInt8>) { append(value) }

    public var count: Int { ends.count }
    public var isEmpty: Bool { ends.isEmpty }

    public mutating func append(_ value: ArraySlice<UInt8>) {
        bytes.append(contentsOf: value)
        ends.append(bytes.count)
    }

    /// Empties the batch and keeps its storage for the next wake-up.
    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
    }

    public func makeIterator() -> Iterator { Iterator(batch: self) }

    public struct Iterator: IteratorProtocol {
        let batch: NotificationBatch
        var index = 0
        var start = 0

        public mutating func next() -> ArraySlice<UInt8>? {
            guard index < batch.ends.count else { return nil }
            let end = batch.ends[index]
            defer { (index, start) = (index + 1, end) }
            return batch.bytes[start..<end]
        }
    }
}
