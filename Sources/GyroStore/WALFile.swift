import CSQLite
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The WAL file written once to the size it reaches anyway, and kept across restarts.
///
/// Why: every commit ends with an fdatasync of the WAL. While the file grows, that sync must also
/// commit the filesystem's journal (the inode's new size, the new blocks' allocation): on ext4 a
/// journal transaction of several blocks per commit, more than the commit's own frames. A WAL whose
/// blocks already exist is only overwritten, so a commit's sync writes its frames and nothing else.
/// The padding is zeros, which are never valid frames (a frame carries the WAL header's salt and a
/// running checksum): SQLite reads a WAL up to its first invalid frame, so the padding is never
/// taken for data, and a WAL left by a crash keeps its frames (only bytes past its end are added).
/// Written blocks, not `fallocate`: on ext4 the first write into an allocated-but-unwritten extent
/// changes the extent tree, which is again a journal commit.
///
/// SQLite deletes the WAL when the last connection closes, unless it is persistent
/// (`SQLITE_FCNTL_PERSIST_WAL`); with no `journal_size_limit` it is then left at its size, so
/// the padding is written once per data directory, not at every start.
enum WALFile {
    /// Frames past the automatic checkpoint's threshold: the commit that reaches the threshold
    /// (with a chunk's document: a few pages compact, ~35 as an older gateway's JSON) is written
    /// whole before the checkpoint runs.
    static let spareFrames = 128

    /// Keeps the WAL file when `db` closes (the writer: the connection that checkpoints at close).
    static func persist(_ db: SQLiteConnection) {
        var on: Int32 = 1
        _ = sqlite3_file_control(db.handle, "main", SQLITE_FCNTL_PERSIST_WAL, &on)
    }

    /// The size the WAL of `db` reaches between checkpoints: its header and the frames up to the
    /// automatic checkpoint's threshold, plus ``spareFrames``.
    static func workingSize(_ db: SQLiteConnection) throws -> Int {
        let pageSize = try db.first("PRAGMA page_size") { try $0.int(0) } ?? 4096
        let threshold = try db.first("PRAGMA wal_autocheckpoint") { try $0.int(0) } ?? 1000
        return 32 + (max(threshold, 0) + spareFrames) * (24 + pageSize)
    }

    /// Appends zero blocks to the WAL at `path` up to `size` and syncs them; a WAL already that
    /// large is left alone. Returns the bytes added, or `nil` when the disk had no room (the WAL
    /// then grows as SQLite writes, as without this).
    @discardableResult
    static func presize(path: String, to size: Int) -> Int? {
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        let start = Int(info.st_size)
        guard start < size else { return 0 }
        // One page at a time: the page cache keeps the size of the writes that filled it, and a
        // large folio (ext4 makes them of large writes and of readahead) is dirtied, counted in
        // `write_bytes` and kept dirty whole for every commit that writes a frame into it.
        let block = [UInt8](repeating: 0, count: 4096)
        var offset = start
        while offset < size {
            let length = min(block.count, size - offset)
            let written = block.withUnsafeBytes { pwrite(fd, $0.baseAddress, length, off_t(offset)) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                _ = ftruncate(fd, off_t(start))
                return nil
            }
            offset += written
        }
        guard fdatasync(fd) == 0 else { return nil }
        return size - start
    }

    /// Caches the WAL page by page. Why: opening a store whose WAL exists reads it whole
    /// (SQLite's recovery), and readahead caches it in large folios, each of which every later
    /// commit would dirty whole (see `presize`). Its clean pages are dropped and read again one
    /// page at a time without readahead, so that a commit dirties the pages it writes and no
    /// more, and finds them cached (a partly written page that is not cached is read first).
    /// Only the cache is affected, never the file.
    static func cachePageByPage(path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        #if canImport(Glibc)
        _ = posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_DONTNEED))
        _ = posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_RANDOM))
        #endif
        var page = [UInt8](repeating: 0, count: 4096)
        var offset = 0
        while true {
            let count = page.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            offset += count
        }
    }
}
