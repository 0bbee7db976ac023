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
        let block = [UInt8](repeating: 0, count: 1 << 16)
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
}
