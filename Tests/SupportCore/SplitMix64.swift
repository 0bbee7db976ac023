/// The tests' one seeded generator: SplitMix64 (Steele, Lea and Flood 2014), the same numbers for
/// the same seed on every run and machine, so that a failure reproduces.
///
/// A test with a fixed seed passes it to ``init(seed:)``. A test that draws a fresh seed on every
/// run takes ``SplitMix64/fresh(_:)``: it prints the seed, and `GYROGATE_TEST_SEED` replays it.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The seed this generator started from (quote it in failure messages).
    public let seed: UInt64
    private var state: UInt64

    public init(seed: UInt64) {
        self.seed = seed
        state = seed
    }

    /// A generator from `GYROGATE_TEST_SEED` when set (decimal or 0x hex), else from the system's
    /// generator; the seed is printed with `label`, so that a failing run can be replayed.
    public static func fresh(_ label: String) -> SplitMix64 {
        let text = ProcessInfoSeed.environmentSeed
        let seed = text.flatMap { $0.hasPrefix("0x") ? UInt64($0.dropFirst(2), radix: 16) : UInt64($0) }
            ?? UInt64.random(in: 0...UInt64.max)
        print("\(label): seed \(seed) (replay with GYROGATE_TEST_SEED=\(seed))")
        return SplitMix64(seed: seed)
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A double in 0..<1 from the top 53 bits.
    public mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }

    /// 0..<bound by remainder (the JSON grammar tests' historic draw; use `Int.random(in:using:)` elsewhere).
    public mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    public mutating func byte() -> UInt8 { UInt8(truncatingIfNeeded: next()) }

    public mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in byte() } }

    /// Applies 1-4 random mutations: flip a bit, replace a byte, insert, delete, truncate, extend.
    public mutating func mutate(_ input: [UInt8]) -> [UInt8] {
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

#if canImport(Glibc)
import Glibc
#endif

enum ProcessInfoSeed {
    static var environmentSeed: String? { getenv("GYROGATE_TEST_SEED").map { String(cString: $0) } }
}
