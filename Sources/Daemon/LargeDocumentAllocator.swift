import CMalloc

/// Keeps glibc from returning the memory of large documents to the kernel after each use.
///
/// Why: a chunk document is ~140 KB, above glibc's initial 128 KiB mmap threshold, and the
/// heap's top is trimmed once 2x that is free. So every copy of a document (read from SQLite,
/// handed to libmosquitto, rendered by capture) could be a fresh mapping: 35 page faults and
/// 35 zeroed pages, then an munmap. `mqtt-bench` measured a third of the publisher's CPU time
/// in those faults. Fixed thresholds keep such blocks in the heap and reuse them; the cost is
/// up to `trimThreshold` of free memory kept per arena after a burst.
public enum LargeDocumentAllocator {
    /// Blocks at least this large are still mapped on their own (rare: whole-store reads).
    public static let mmapThreshold: Int32 = 4 << 20
    /// Free memory at the top of a heap kept for reuse instead of being returned.
    public static let trimThreshold: Int32 = 32 << 20

    /// Call once at process start, before the first large allocation.
    public static func configure() {
        mallopt(M_MMAP_THRESHOLD, mmapThreshold)
        mallopt(M_TRIM_THRESHOLD, trimThreshold)
    }
}
