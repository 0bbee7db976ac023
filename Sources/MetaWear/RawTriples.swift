/// One raw three-axis sample: the int16 values at offsets 0, 2 and 4 of a 6-byte sample.
public struct RawTriple: Hashable, Sendable {
    public var x: Int16
    public var y: Int16
    public var z: Int16

    @inlinable
    public init(x: Int16, y: Int16, z: Int16) {
        self.x = x
        self.y = y
        self.z = z
    }
}

/// The samples of one notification, oldest first: 1 (unpacked) or 3 (packed).
///
/// Stored inline rather than in an `Array`, so routing a data packet allocates nothing.
public struct RawTriples: RandomAccessCollection, Hashable, Sendable {
    /// The most samples one notification can carry (packed: 18 payload bytes).
    public static let capacity = 3

    @usableFromInline var storage: (RawTriple, RawTriple, RawTriple)
    @usableFromInline var _count: UInt8

    @inlinable
    public init(_ first: RawTriple) {
        let zero = RawTriple(x: 0, y: 0, z: 0)
        storage = (first, zero, zero)
        _count = 1
    }

    @inlinable
    public init(_ first: RawTriple, _ second: RawTriple) {
        storage = (first, second, RawTriple(x: 0, y: 0, z: 0))
        _count = 2
    }

    @inlinable
    public init(_ first: RawTriple, _ second: RawTriple, _ third: RawTriple) {
        storage = (first, second, third)
        _count = 3
    }

    /// Up to 3 triples. It is a programmer error to pass none or more than 3.
    public init(_ triples: [RawTriple]) {
        precondition(!triples.isEmpty && triples.count <= Self.capacity, "RawTriples holds 1...3 samples")
        let zero = RawTriple(x: 0, y: 0, z: 0)
        storage = (triples[0], triples.count > 1 ? triples[1] : zero, triples.count > 2 ? triples[2] : zero)
        _count = UInt8(triples.count)
    }

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { Int(_count) }

    @inlinable
    public subscript(position: Int) -> RawTriple {
        precondition(position >= 0 && position < Int(_count), "RawTriples index out of range")
        switch position {
        case 0: return storage.0
        case 1: return storage.1
        default: return storage.2
        }
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.elementsEqual(rhs) }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for triple in self { hasher.combine(triple) }
    }
}
