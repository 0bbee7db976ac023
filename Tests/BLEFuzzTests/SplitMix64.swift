/// A tiny deterministic PRNG (SplitMix64, Steele et al. 2014) so fuzz runs are reproducible from a seed.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func byte() -> UInt8 { UInt8(truncatingIfNeeded: next()) }

    mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in byte() } }

    /// Applies 1-4 random mutations: flip a bit, replace a byte, insert, delete, truncate, extend.
    mutating func mutate(_ input: [UInt8]) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...4, using: &self) {
            switch Int.random(in: 0..<6, using: &self) {
            case 0 where !bytes.isEmpty:
                bytes[Int.random(in: 0..<bytes.count, using: &self)] ^= 1 << UInt8.random(in: 0..<8, using: &self)
            case 1 where !bytes.isEmpty:
                bytes[Int.random(in: 0..<bytes.count, using: &self)] = byte()
            case 2:
                bytes.insert(byte(), at: Int.random(in: 0...bytes.count, using: &self))
            case 3 where !bytes.isEmpty:
                bytes.remove(at: Int.random(in: 0..<bytes.count, using: &self))
            case 4:
                bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &self)))
            default:
                bytes += self.bytes(Int.random(in: 0...8, using: &self))
            }
        }
        return bytes
    }
}
