import CSQLite
import FoundationEssentials
import Logging
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The gateway's source of truth: documents by Firestore path, the samples of open chunks (in
/// the `SampleRing`), sessions, and the outbox of publishes, in one SQLite file.
///
/// Durability: WAL journal with `synchronous = FULL`, so a commit that returned has reached
/// the disk and survives `kill -9` and power loss. Commits are batched by the capture layer
/// (at most `commitIntervalMs` or one chunk apart), which bounds what a crash can lose and
/// keeps the number of fsyncs low.
///
/// Connections: one writer, on a thread of its own, takes every write in turn; reads go to
/// read-only connections on threads of their own (`ReaderPool`), each reading a snapshot
/// while the writer commits. An in-memory store has the writer only, which also reads.
///
/// Opening checks what it must trust to start and what the last run wrote, in time that does
/// not grow with the file (`StoreOpenCheck`, `CheckpointCheck`); the whole file is checked
/// in the background (``verifyIntegrity()``). A file found corrupt at open, or marked damaged by
/// the run that found it so (`StoreHealth`), is moved aside (never deleted) as
/// `store.sqlite.corrupt-<epoch>` and a new store is started, with a critical log line.
public struct GyroStore: Sendable {
    public static let fileName = "store.sqlite"

    let writer: ConnectionActor
    /// `nil` for an in-memory store: the writer reads too.
    let readers: ReaderPool?
    /// Readers without the memory map, for reads of many small rows (``readRows(_:_:)``);
    /// `nil` for an in-memory store.
    let rowReaders: ReaderPool?
    let logger: Logger
    /// Bytes the store may use before retention prunes published chunk data.
    public let maxBytes: Int
    /// Files moved aside at open because they were corrupt.
    public let quarantined: [String]
    /// The data directory; `nil` for an in-memory store.
    public let directory: String?
    /// Space kept free on the data directory's filesystem for the moment it fills (``StoreReserve``).
    public let reserve: StoreReserve?
    /// What the store has written since it opened; `nil` for an in-memory store.
    public let writes: StoreWrites?
    /// Whether SQLite has found the file damaged since it opened, and how far it is checked.
    let health: StoreHealth

    /// Opens (or creates) the store in `directory`, migrating it to the current schema.
    public static func open(directory: String, maxBytes: Int = 2 << 30, reserveBytes: Int = StoreReserve.defaultBytes,
                            logger: Logger) throws(StoreError) -> GyroStore {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw .directory(path: directory, reason: fileSystemReason(error))
        }
        let path = filePath(directory, fileName)
        do {
            // Before SQLite opens the file: a damaged file is not opened for writing at all.
            if let reason = StoreHealth.marker(databasePath: path) {
                throw SQLiteError(code: SQLITE_CORRUPT, message: "found damaged by the previous run: \(reason)")
            }
            let verdict = CheckpointCheck.verify(databasePath: path)
            if case .damaged(_, let reason) = verdict { throw SQLiteError(code: SQLITE_CORRUPT, message: reason) }
            let store = try openFile(path, maxBytes: maxBytes, logger: logger, directory: directory, reserveBytes: reserveBytes)
            let compared = if case .consistent(let pages) = verdict { pages.count } else { 0 }
            logger.info("store opened; its full integrity check runs in the background", metadata: [
                "subsystem": "store", "checkpointPagesCompared": "\(compared)",
            ])
            return store
        } catch let error as SQLiteError where error.isCorruption {
            let moved = quarantine(path: path, logger: logger, reason: error.description)
            do {
                return try openFile(path, maxBytes: maxBytes, logger: logger, quarantined: moved, directory: directory,
                                    reserveBytes: reserveBytes)
            } catch {
                throw .database(context: "opening a new store after moving the corrupt one aside", reason: "\(error)")
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw .database(context: "opening \(path)", reason: "\(error)")
        }
    }

    /// An in-memory store for codec-level tests; the same schema and code paths.
    public static func inMemory(logger: Logger = Logger(label: "gyrogate.store")) throws -> GyroStore {
        let connection = try SQLiteConnection(path: ":memory:")
        try prepare(connection)
        return try GyroStore(writer: connection, readers: nil, maxBytes: 1 << 40, logger: logger)
    }

    private static func openFile(_ path: String, maxBytes: Int, logger: Logger, quarantined: [String] = [], directory: String,
                                 reserveBytes: Int) throws -> GyroStore {
        let writer = try openWriter(path)
        let readers = ReaderPool(maximum: readerCount) { () throws(SQLiteError) in
            let reader = try SQLiteConnection(path: path, options: .init(readOnly: true))
            try prepare(reader)
            return reader
        }
        let rowReaders = ReaderPool(maximum: rowReaderCount) { () throws(SQLiteError) in
            let reader = try SQLiteConnection(path: path, options: .init(readOnly: true))
            try prepare(reader)
            try reader.execute("PRAGMA mmap_size = 0")
            return reader
        }
        return try GyroStore(writer: writer, readers: readers, rowReaders: rowReaders, maxBytes: maxBytes, logger: logger, quarantined: quarantined,
                             directory: directory, reserve: StoreReserve(directory: directory, bytes: reserveBytes))
    }

    /// Migrates `writer` on the calling thread, then hands it to its own thread.
    init(writer: sending SQLiteConnection, readers: ReaderPool?, rowReaders: ReaderPool? = nil, maxBytes: Int, logger: Logger, quarantined: [String] = [],
         directory: String? = nil, reserve: StoreReserve? = nil) throws {
        reserve?.fill()
        let (_, unknown) = try Self.migrator.migrate(writer)
        if !unknown.isEmpty {
            logger.warning("the store was migrated by a newer gateway; its newer schema changes are kept as they are", metadata: [
                "subsystem": "store", "unknownMigrations": "\(unknown.joined(separator: ","))",
            ])
        }
        let ring = try SampleRing.load(writer, logger: logger)
        self.writer = try ConnectionActor(owning: writer, ring: ring, threadName: "store-writer")
        self.readers = readers
        self.rowReaders = rowReaders
        self.maxBytes = maxBytes
        self.logger = logger
        self.quarantined = quarantined
        self.directory = directory
        self.reserve = reserve
        writes = directory == nil ? nil : StoreWrites()
        health = StoreHealth(databasePath: directory.map { Self.filePath($0, Self.fileName) }, logger: logger)
    }

    /// Reads that can run at once beside the writer: the publisher's outbox pass, which can wait
    /// seconds for the broker, plus the admin API, capture and retention checks.
    static let readerCount = 4
    /// Readers of rows without the map (``readRows(_:_:)``): the start's recovery, one read at a time.
    static let rowReaderCount = 1

    /// Bytes of the file that read-only connections map into memory.
    ///
    /// Why: the publisher reads every document back (a chunk stored as JSON by older gateways is
    /// ~140 KB, 35 overflow pages; compact, about 4); through `pread` that costs a system call and a copy per page, and draining a
    /// backlog spent more time there than in sending. Mapped, a page is read in place, and a
    /// pass over the documents took much less time (docs/benchmarks.md). Only readers map:
    /// writes keep going through the WAL. The trade-off, from SQLite's documentation: a disk
    /// read error on a mapped page is a SIGBUS (the service restarts and checks the file)
    /// instead of an error. The size is SQLite's default compile-time ceiling (~2 GiB).
    static let readerMappedBytes: Int64 = 0x7FFF_0000

    /// SQLite's page cache per connection, in KiB (its default is 2,000 each).
    ///
    /// Why: with up to five connections the caches were the largest part of the gateway's heap
    /// once chunk documents flowed (each copy of a ~140 KB document stays cached). Readers read
    /// the file through the map; what they cache is mostly WAL pages read once. The writer
    /// keeps enough for the tables' and indexes' interior pages a commit touches.
    static let readerCacheKiB = 256
    static let writerCacheKiB = 1024

    /// The page size of a store file this version creates.
    ///
    /// Why 1 KiB, not SQLite's 4 KiB: most pages a commit writes are a row or an index entry
    /// changed in place (a chunk's row, the session's, the outbox's, the documents' indexes),
    /// and each costs the WAL a whole page, then the database file again at the checkpoint.
    /// Content that fills pages (chunk bodies, the sample ring's slots) costs the same bytes in
    /// smaller pages. A file keeps the page size it was created with (changing it means
    /// rewriting the whole file), so stores from before stay at 4 KiB. docs/durability.md.
    static let newFilePageSize = 1024

    /// The WAL's size at which it is checkpointed, whatever the page size: SQLite's default
    /// (1,000 pages) in 4 KiB pages.
    static let checkpointBytes = 1000 * 4096

    /// What every connection sets before its first use.
    static func prepare(_ db: SQLiteConnection) throws(SQLiteError) {
        try db.execute("PRAGMA foreign_keys = ON")
        // Every b-tree page SQLite loads has its cells checked against the page's bounds, not
        // only its header: a damaged page is an error (SQLITE_CORRUPT) where it is read, before
        // its contents are used. The open check relies on it (StoreOpenCheck).
        try db.execute("PRAGMA cell_size_check = ON")
        try db.execute("PRAGMA synchronous = FULL")
        // Debian builds SQLite with SECURE_DELETE, which zeroes every freed page and writes
        // it: evicting or pruning chunk documents wrote each freed page to the WAL (and again
        // at the checkpoint), much slower, and grew the WAL exactly when the disk was full
        // (docs/benchmarks.md). FAST still zeroes deleted content inside pages written anyway.
        try db.execute("PRAGMA secure_delete = FAST")
        if db.isReadOnly {
            try db.execute("PRAGMA mmap_size = \(readerMappedBytes)")
            try db.execute("PRAGMA cache_size = -\(readerCacheKiB)")
        } else {
            try db.execute("PRAGMA cache_size = -\(writerCacheKiB)")
            // A statement that writes a chunk document keeps the pages it changes in a statement
            // journal, which spills to a new temporary file past 64 KiB: a file created, written
            // and removed for every chunk closed. In memory it is a few pages for the statement's time.
            try db.execute("PRAGMA temp_store = MEMORY")
        }
    }

    /// The write connection of the file at `path`, in WAL mode, its schema and b-trees' edges checked.
    static func openWriter(_ path: String) throws -> SQLiteConnection {
        let writer = try SQLiteConnection(path: path)
        try prepare(writer)
        // Takes effect only in a new file: before its header is first written (just below).
        try writer.execute("PRAGMA page_size = \(newFilePageSize)")
        // Reading the header here is also what finds a file that is not a database (SQLITE_NOTADB).
        let mode = try writer.first("PRAGMA journal_mode = WAL") { try $0.text(0) }
        guard mode == "wal" else {
            throw SQLiteError(code: SQLITE_CANTOPEN, message: "\(path) cannot use a WAL journal (journal_mode is \(mode ?? "unknown"))")
        }
        // The WAL is checkpointed at about 4 MB (`checkpointBytes`), then reused from its start:
        // no more growth, and a checkpoint (two fdatasyncs of its own, the WAL's and the
        // database's, plus the WAL header's at the next commit) every few minutes. A WAL that
        // reaches its size within seconds checkpoints every few seconds instead, and the writer
        // thread uses more CPU, not less (e2e bench, docs/benchmarks.md).
        let pageSize = try writer.first("PRAGMA page_size") { try $0.int(0) } ?? 4096
        try writer.execute("PRAGMA wal_autocheckpoint = \(max(1, checkpointBytes / pageSize))")
        // Not PRAGMA quick_check: it reads the whole file (25-50 s for 2 GB on an SD card); the
        // background check does (verifyIntegrity).
        try StoreOpenCheck.verify(writer)
        WALFile.persist(writer)
        WALFile.presize(path: path + "-wal", to: try WALFile.workingSize(writer))
        WALFile.cachePageByPage(path: path + "-wal")
        return writer
    }

    /// Moves the damaged file and its WAL aside so that an operator can still recover from it.
    static func quarantine(path: String, logger: Logger, reason: String) -> [String] {
        let stamp = Int(Date().timeIntervalSince1970)
        var moved: [String] = []
        for suffix in ["", "-wal", "-shm", StoreHealth.markerSuffix] where FileManager.default.fileExists(atPath: path + suffix) {
            let target = "\(path).corrupt-\(stamp)\(suffix)"
            if (try? FileManager.default.moveItem(atPath: path + suffix, toPath: target)) != nil { moved.append(target) }
        }
        logger.critical("store file is corrupt; moved it aside and started a new store", metadata: [
            "subsystem": "store", "reason": "\(reason)", "movedTo": "\(moved.joined(separator: ", "))",
        ])
        return moved
    }

    /// A file system error as the system's sentence for it ("Permission denied"): the errors
    /// of FoundationEssentials print as their structure.
    static func fileSystemReason(_ error: any Error) -> String {
        let posix = (error as? CocoaError)?.underlying as? POSIXError ?? error as? POSIXError
        guard let posix, let text = strerror(posix.code.rawValue) else { return "\(error)" }
        return String(cString: text)
    }

    /// `name` in `directory`.
    static func filePath(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
