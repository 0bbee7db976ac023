#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Checks, at open and before SQLite touches the files, that the database file holds what the
/// last completed checkpoint wrote into it, from the copies of those pages the WAL still holds.
///
/// Why these pages: they are what the last run wrote into the database file, and the writes an
/// SD card is most likely to have lost or torn at a power cut (a card that acknowledges a sync
/// before the data is in flash). SQLite cannot see such a loss: the file's pages carry no
/// checksum, and the WAL's frames, which do, are no longer read once checkpointed.
///
/// How: the WAL is reused from its start after a checkpoint has copied all of it (the store
/// keeps the file, `SQLITE_FCNTL_PERSIST_WAL`), under a new salt. Past the frames of the current
/// cycle, the file still holds the previous cycle's later frames: pages that checkpoint wrote.
/// Those whose running checksum verifies (from the second one on: the first one's predecessor
/// was overwritten) and that belong to a committed transaction (up to the cycle's last commit
/// frame) must equal the database file's page, byte for byte, unless the current cycle wrote
/// that page again (SQLite reads it from the WAL, and a checkpoint of the current cycle may
/// have rewritten it in the file). A page that differs is damage.
///
/// What it cannot see: the previous cycle's frames the current cycle overwrote, and older
/// checkpoints. The full check in the background covers the rest of the file's structure
/// (docs/durability.md, "Corruption").
enum CheckpointCheck {
    enum Verdict: Sendable, Equatable {
        /// No previous cycle's frames in the WAL (a new store, a WAL truncated or never reused).
        case nothingToCompare
        /// The file held what the last checkpoint wrote to these pages.
        case consistent(pages: [Int])
        /// `page` of the database file differs from the copy the last checkpoint wrote.
        case damaged(page: Int, reason: String)
    }

    static let headerBytes = 32
    static let frameHeaderBytes = 24

    /// Compares the database at `path` with its `-wal`; files that cannot be read are nothing to compare.
    static func verify(databasePath path: String) -> Verdict {
        guard let wal = FileReader(path: path + "-wal"), let database = FileReader(path: path) else { return .nothingToCompare }
        guard let header = WALHeader(wal.read(at: 0, count: headerBytes)) else { return .nothingToCompare }
        let frameBytes = frameHeaderBytes + header.pageSize
        var offset = headerBytes
        // The current cycle: every frame with the header's salts (committed or not, SQLite's to judge).
        var rewritten: Set<UInt32> = []
        var frame = wal.read(at: offset, count: frameBytes)
        while let current = WALFrame(frame, pageSize: header.pageSize), current.salts == header.salts {
            rewritten.insert(current.page)
            offset += frameBytes
            frame = wal.read(at: offset, count: frameBytes)
        }
        // The previous cycle: salt-1 one less (SQLite adds one at each restart). Its first frame
        // only seeds the running checksum.
        guard let first = WALFrame(frame, pageSize: header.pageSize), first.salts.0 == header.salts.0 &- 1 else { return .nothingToCompare }
        // What a writer in another process (`gyrogate sessions --data-dir` beside a running
        // gateway) would change first: the header at a restart, this frame when it appends.
        let boundary = (offset: offset, header: wal.read(at: 0, count: headerBytes), frame: Array(frame.prefix(frameHeaderBytes)))
        var sum = first.checksum
        var committed: [UInt32: Int] = [:], pending: [UInt32: Int] = [:]
        var finalPages: UInt32 = 0
        offset += frameBytes
        frame = wal.read(at: offset, count: frameBytes)
        while let stale = WALFrame(frame, pageSize: header.pageSize), stale.salts == first.salts {
            let expected = header.checksum(frame, seed: sum)
            guard expected == stale.checksum else { break }
            sum = expected
            pending[stale.page] = offset + frameHeaderBytes
            if stale.commitPages > 0 {
                committed.merge(pending) { _, later in later }
                pending = [:]
                finalPages = stale.commitPages
            }
            offset += frameBytes
            frame = wal.read(at: offset, count: frameBytes)
        }
        let fileSize = database.size
        let pages = committed.keys
            .filter { !rewritten.contains($0) && $0 <= finalPages && Int($0) * header.pageSize <= fileSize }
            .sorted()
        for page in pages {
            let copy = wal.read(at: committed[page]!, count: header.pageSize)
            let stored = database.read(at: (Int(page) - 1) * header.pageSize, count: header.pageSize)
            guard copy.count == header.pageSize, stored == copy else {
                // Damage only if no writer touched the WAL meanwhile: its new frames, checkpointed,
                // could have changed the page since this pass read the current cycle.
                guard wal.read(at: 0, count: headerBytes) == boundary.header,
                      wal.read(at: boundary.offset, count: frameHeaderBytes) == boundary.frame else { return .nothingToCompare }
                return .damaged(page: Int(page), reason: "page \(page) of the database file is not what the last checkpoint wrote there "
                    + "(the WAL still holds that copy): the disk lost or damaged a write it had acknowledged")
            }
        }
        return pages.isEmpty ? .nothingToCompare : .consistent(pages: pages.map(Int.init))
    }
}

/// The WAL's header: page size, salts and the byte order of its checksums.
private struct WALHeader {
    let pageSize: Int
    let salts: (UInt32, UInt32)
    let bigEndianChecksums: Bool

    init?(_ bytes: [UInt8]) {
        guard bytes.count == CheckpointCheck.headerBytes else { return nil }
        let magic = bigEndian(bytes, 0)
        guard magic == 0x377F_0682 || magic == 0x377F_0683 else { return nil }
        bigEndianChecksums = magic & 1 == 1
        let size = Int(bigEndian(bytes, 8))
        guard size >= 512, size <= 65536, size & (size - 1) == 0 else { return nil }
        pageSize = size
        salts = (bigEndian(bytes, 16), bigEndian(bytes, 20))
        guard checksum(bytes, over: 0..<24, seed: (0, 0)) == (bigEndian(bytes, 24), bigEndian(bytes, 28)) else { return nil }
    }

    /// A frame's running checksum: its header's first 8 bytes and its page, from `seed`.
    func checksum(_ frame: [UInt8], seed: (UInt32, UInt32)) -> (UInt32, UInt32) {
        let afterHeader = checksum(frame, over: 0..<8, seed: seed)
        return checksum(frame, over: CheckpointCheck.frameHeaderBytes..<frame.count, seed: afterHeader)
    }

    /// SQLite's WAL checksum (walChecksumBytes): pairs of 32-bit words in the header's byte order.
    func checksum(_ bytes: [UInt8], over range: Range<Int>, seed: (UInt32, UInt32)) -> (UInt32, UInt32) {
        var (s1, s2) = seed
        var index = range.lowerBound
        while index + 8 <= range.upperBound {
            let x0 = bigEndianChecksums ? bigEndian(bytes, index) : littleEndian(bytes, index)
            let x1 = bigEndianChecksums ? bigEndian(bytes, index + 4) : littleEndian(bytes, index + 4)
            s1 = s1 &+ x0 &+ s2
            s2 = s2 &+ x1 &+ s1
            index += 8
        }
        return (s1, s2)
    }
}

/// A frame's header.
private struct WALFrame {
    let page: UInt32
    /// The database's size in pages after this frame's transaction, on its commit frame; else 0.
    let commitPages: UInt32
    let salts: (UInt32, UInt32)
    let checksum: (UInt32, UInt32)

    init?(_ bytes: [UInt8], pageSize: Int) {
        guard bytes.count == CheckpointCheck.frameHeaderBytes + pageSize else { return nil }
        page = bigEndian(bytes, 0)
        guard page > 0 else { return nil }
        commitPages = bigEndian(bytes, 4)
        salts = (bigEndian(bytes, 8), bigEndian(bytes, 12))
        checksum = (bigEndian(bytes, 16), bigEndian(bytes, 20))
    }
}

private func bigEndian(_ bytes: [UInt8], _ at: Int) -> UInt32 {
    UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
}

private func littleEndian(_ bytes: [UInt8], _ at: Int) -> UInt32 {
    UInt32(bytes[at + 3]) << 24 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at])
}

/// A file read with `pread`, without readahead (the WAL is read again page by page afterwards,
/// `WALFile.cachePageByPage`, and large cached folios would undo that).
///
/// Opened and closed before SQLite opens the store: closing a descriptor drops every POSIX lock
/// the process holds on that file, which must not happen under a connection's feet.
private final class FileReader {
    let fd: Int32

    init?(path: String) {
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        #if canImport(Glibc)
        _ = posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_RANDOM))
        #endif
    }

    deinit { close(fd) }

    var size: Int {
        var info = stat()
        return fstat(fd, &info) == 0 ? Int(info.st_size) : 0
    }

    /// Up to `count` bytes at `offset`: fewer at the end of the file.
    func read(at offset: Int, count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(offset + done)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            done += n
        }
        return done == count ? bytes : Array(bytes[0..<done])
    }
}
