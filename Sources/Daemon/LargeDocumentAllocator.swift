import CMalloc

/// Keeps glibc from returning the memory of large documents to the kernel after each use.
///
/// Why: a chunk document is ~140 KB, above glibc's initial 128 KiB mmap threshold, and the
/// heap's top is trimmed once 2x that is free. So every copy of a document (read from SQLite,
/// handed to libmosquitto, rendered by capture) could be a fresh mapping: 35 page faults and
/// 35 zeroed pages, then an munmap: a large share of the publisher's CPU time went to those
/// faults (`mqtt-bench`, docs/benchmarks.md). Fixed thresholds keep such blocks in the heap and reuse them; the cost is
/// up to `trimThreshold` of free memory kept per arena after a burst.
public enum LargeDocumentAllocator {
    /// Blocks at least this large are still mapped on their own (rare: whole-store reads).
    public static let mmapThreshold: Int32 = 4 << 20
    /// Free memory at the top of a heap kept for reuse instead of being returned.
    public static let trimThreshold: Int32 = 32 << 20

    /// Heaps (glibc arenas) shared by all threads.
    ///
    /// Why: glibc gives threads that allocate at the same time heaps of their own, and each
    /// keeps what it freed. A document is rendered on one thread, read back on a store reader
    /// and copied by libmosquitto on its own, so with an arena each the same ~140 KB lived in
    /// three heaps, and peak RSS rose with it (e2e bench, docs/benchmarks.md). The threads that allocate
    /// are few and not on the data plane, so one lock is cheap.
    public static let arenas: Int32 = 1

    /// Call once at process start, before the first large allocation.
    public static func configure() {
        mallopt(M_MMAP_THRESHOLD, mmapThreshold)
        mallopt(M_TRIM_THRESHOLD, trimThreshold)
        mallopt(M_ARENA_MAX, arenas)
    }
}
