import FoundationEssentials

/// New chunk ids: time-ordered (version 7, RFC 9562) UUIDs in lowercase text, which the apps'
/// `realtime_data` ids (random version 4 UUIDs) look like.
///
/// Why time-ordered: the id is the key of the chunk row and, as the document path, of the
/// document, its version index and the outbox's path index. Random keys land each new chunk in
/// a random leaf page of four b-trees, so a commit closing many chunks dirtied as many pages in
/// each, and more of them as the store grew (device bytes a sample rising with the store's
/// size); ids that grow with time all go into the rightmost leaves (docs/benchmarks.md,
/// "Session age"). The 48 high bits are the wall clock's milliseconds, the rest random (74 bits),
/// so ids stay unique whatever the clock does.
///
/// Why not `UUID()`: FoundationEssentials' UUID on Linux opens, reads and closes /dev/urandom
/// for every id, three system calls and a file descriptor per chunk on the writer's thread.
/// `SystemRandomNumberGenerator` asks the kernel directly (`getrandom`, one call per 8 bytes).
enum ChunkId {
    static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        let milliseconds = UInt64(max(0, Date().timeIntervalSince1970 * 1000)) & 0xFFFF_FFFF_FFFF
        return format(high: milliseconds << 16 | generator.next() & 0xFFFF, low: generator.next())
    }

    /// The UUID whose 16 bytes are `high` then `low` (big-endian), version and variant bits set.
    static func format(high: UInt64, low: UInt64) -> String {
        let high = high & ~0xF000 | 0x7000                           // version 7 (byte 6's high nibble)
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
