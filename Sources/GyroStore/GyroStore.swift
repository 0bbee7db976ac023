import Foundation
import GRDB
import Logging

/// The gateway's source of truth: documents by Firestore path, the samples of open chunks,
/// sessions, and the outbox of publishes, in one SQLite file.
///
/// Durability: WAL journal with `synchronous = FULL`, so a commit that returned has reached
/// the disk and survives `kill -9` and power loss. Commits are batched by the capture layer
/// (at most `commitIntervalMs` or one chunk apart), which bounds what a crash can lose and
/// keeps the number of fsyncs low.
///
/// A file that SQLite reports as corrupt is moved aside (never deleted) as
/// `store.sqlite.corrupt-<epoch>` and a new store is started, with an error in the log.
public struct GyroStore: Sendable {
    public static let fileName = "store.sqlite"

    let writer: any DatabaseWriter
    let logger: Logger
    /// Bytes the store may use before retention prunes published chunk data.
    public let maxBytes: Int
    /// Files moved aside at open because they were corrupt.
    public let quarantined: [String]
    /// The data directory; `nil` for an in-memory store.
    public let directory: String?
    /// Space kept free on the data directory's filesystem for the moment it fills (``StoreReserve``).
    public let reserve: StoreReserve?

    /// Opens (or creates) the store in `directory`, migrating it to the current schema.
    public static func open(directory: String, maxBytes: Int = 2 << 30, reserveBytes: Int = StoreReserve.defaultBytes,
                            logger: Logger) throws(StoreError) -> GyroStore {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw .directory(path: directory, reason: (error as NSError).localizedDescription)
        }
        let path = (directory as NSString).appendingPathComponent(fileName)
        do {
            return try GyroStore(writer: openPool(path), maxBytes: maxBytes, logger: logger, directory: directory,
                                 reserve: StoreReserve(directory: directory, bytes: reserveBytes))
        } catch let error as DatabaseError where error.isCorruption {
            let moved = quarantine(path: path, logger: logger, reason: error.description)
            do {
                return try GyroStore(writer: openPool(path), maxBytes: maxBytes, logger: logger, quarantined: moved,
                                     directory: directory, reserve: StoreReserve(directory: directory, bytes: reserveBytes))
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
        try GyroStore(writer: DatabaseQueue(configuration: makeConfiguration()), maxBytes: 1 << 40, logger: logger)
    }

    init(writer: any DatabaseWriter, maxBytes: Int, logger: Logger, quarantined: [String] = [], directory: String? = nil,
         reserve: StoreReserve? = nil) throws {
        self.writer = writer
        self.maxBytes = maxBytes
        self.logger = logger
        self.quarantined = quarantined
        self.directory = directory
        self.reserve = reserve
        reserve?.fill()
        try Self.migrator.migrate(writer)
    }

    /// Bytes of the file that read-only connections map into memory.
    ///
    /// Why: the publisher reads every document back (chunk documents are ~140 KB, 35 overflow
    /// pages); through `pread` that costs a system call and a copy per page, and draining a
    /// backlog spent more time there than in sending. Mapped, a page is read in place (one pass
    /// over 5,000 chunk documents: 0.44 s through `pread`, 0.21 s mapped). Only readers map:
    /// writes keep going through the WAL. The trade-off, from SQLite's documentation: a disk
    /// read error on a mapped page is a SIGBUS (the service restarts and checks the file)
    /// instead of an error. The size is SQLite's default compile-time ceiling (~2 GiB).
    static let readerMappedBytes: Int64 = 0x7FFF_0000

    static func makeConfiguration() -> Configuration {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            // Debian builds SQLite with SECURE_DELETE, which zeroes every freed page and writes
            // it: evicting or pruning 1,000 chunk documents wrote 141 MB to the WAL (and again
            // at the checkpoint) instead of 0.2 MB, 7x slower, and grew the WAL exactly when the
            // disk was full. FAST still zeroes deleted content inside pages that are written anyway.
            try db.execute(sql: "PRAGMA secure_delete = FAST")
            if db.configuration.readonly {
                try db.execute(sql: "PRAGMA mmap_size = \(readerMappedBytes)")
            }
        }
        return configuration
    }

    static func openPool(_ path: String) throws -> DatabasePool {
        let pool = try DatabasePool(path: path, configuration: makeConfiguration())
        // Again: the pool sets NORMAL on its writer when it switches to WAL, after
        // `prepareDatabase`, and with NORMAL a commit that returned can be lost with the power.
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        let verdict = try pool.read { db in try String.fetchOne(db, sql: "PRAGMA quick_check") } ?? "no answer"
        guard verdict == "ok" else {
            throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "quick_check: \(verdict)")
        }
        return pool
    }

    /// Moves the damaged file and its WAL aside so that an operator can still recover from it.
    static func quarantine(path: String, logger: Logger, reason: String) -> [String] {
        let stamp = Int(Date().timeIntervalSince1970)
        var moved: [String] = []
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            let target = "\(path).corrupt-\(stamp)\(suffix)"
            if (try? FileManager.default.moveItem(atPath: path + suffix, toPath: target)) != nil { moved.append(target) }
        }
        logger.critical("store file is corrupt; moved it aside and started a new store", metadata: [
            "subsystem": "store", "reason": "\(reason)", "movedTo": "\(moved.joined(separator: ", "))",
        ])
        return moved
    }
}

extension DatabaseError {
    var isCorruption: Bool {
        resultCode == .SQLITE_CORRUPT || resultCode == .SQLITE_NOTADB
    }
}
