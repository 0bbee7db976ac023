/// New chunk ids: random (version 4) UUIDs in lowercase text, as the apps' `realtime_data` ids.
///
/// Why not `UUID()`: FoundationEssentials' UUID on Linux opens, reads and closes /dev/urandom
/// for every id, three system calls and a file descriptor per chunk on the writer's thread.
/// `SystemRandomNumberGenerator` asks the kernel directly (`getrandom`, one call per 8 bytes).
enum ChunkId {
    static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        return format(high: generator.next(), low: generator.next())
    }

    /// The UUID whose 16 bytes are `high` then `low` (big-endian), version and variant bits set.
    static func format(high: UInt64, low: UInt64) -> String {
        let high = high & ~0xF000 | 0x4000                           // version 4 (byte 6's high nibble)
        let low = low & ~(0xC0 << 56) | (0x80 << 56)                  // variant 10xx (byte 8)
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: 36) { out in
            var at = 0
            func put(_ value: UInt64, nibbles: Int) {
                for shift in stride(from: (nibbles - 1) * 4, through: 0, by: -4) {
                    out[at] = digits.utf8Start[Int(value >> UInt64(shift) & 0xF)]
                    at += 1
                }
            }
            func dash() { out[at] = UInt8(ascii: "-"); at += 1 }
            put(high >> 32, nibbles: 8); dash()
            put(high >> 16, nibbles: 4); dash()
            put(high, nibbles: 4); dash()
            put(low >> 48, nibbles: 4); dash()
            put(low, nibbles: 12)
            return at
        }
    }
}
