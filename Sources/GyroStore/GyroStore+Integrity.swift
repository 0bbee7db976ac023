import CIOPriority
import CSQLite
import FoundationEssentials
import PosixThreads

extension GyroStore {
    /// How far the file has been checked, and whether SQLite has found it damaged.
    public var integrity: StoreIntegrity { health.integrity }

    /// Returns the reason once SQLite finds the store damaged (at once if it is), or `nil` when
    /// the calling task is cancelled first: the daemon stops then, so that the next start moves
    /// the file aside.
    public func untilDamaged() async -> String? { await health.untilDamaged() }

    /// Reads the whole file with `PRAGMA quick_check`, on a read-only connection and a thread of
    /// its own at the idle I/O class and the lowest CPU priority, and returns what it found. A
    /// verdict other than "ok" (or a read error) marks the store damaged (`StoreHealth`).
    ///
    /// Why in the background: the check reads every page, 25-50 s for 2 GB on an SD card, and
    /// more when the card is busy; the gateway opens in bounded time instead (`StoreOpenCheck`)
    /// and captures meanwhile. At the idle I/O class its reads wait for the device to have
    /// nothing else to do (on Linux's I/O schedulers that honour classes: BFQ, mq-deadline), so
    /// commits do not queue behind it. The price: its read transaction keeps a snapshot, so the
    /// WAL cannot start again from its beginning until it ends and grows by what is committed
    /// meanwhile (docs/durability.md, "Corruption").
    @discardableResult
    public func verifyIntegrity() async -> StoreIntegrity {
        guard let directory else { return integrity }
        let path = Self.filePath(directory, Self.fileName)
        let started = Date().timeIntervalSince1970 * 1000
        health.set(.checking(sinceMs: started))
        let verdict: Result<String, SQLiteError> = await withCheckedContinuation { continuation in
            let running = DetachedThread.start(name: "store-check") {
                _ = cioprio_idle_this_thread()
                _ = cioprio_nice_this_thread(19)
                continuation.resume(returning: Self.quickCheck(path))
            }
            if !running {
                continuation.resume(returning: .failure(SQLiteError(code: SQLITE_NOMEM, message: "no thread for the integrity check")))
            }
        }
        let seconds = (Date().timeIntervalSince1970 * 1000 - started) / 1000
        switch verdict {
        case .success("ok"):
            health.set(.verified(atMs: Date().timeIntervalSince1970 * 1000, seconds: seconds))
            logger.info("store integrity check: ok", metadata: ["subsystem": "store", "seconds": "\(seconds)"])
        case .success(let problems):
            health.markDamaged("the integrity check (PRAGMA quick_check) found: \(problems)")
        case .failure(let error) where error.isCorruption || error.primaryCode == SQLITE_IOERR:
            health.markDamaged("the integrity check could not read the file: \(error)")
        case .failure(let error):
            // Not a verdict on the file (no thread, no memory): the open checks stand; say so.
            health.set(.openChecked)
            logger.error("store integrity check did not run", metadata: ["subsystem": "store", "error": "\(error)"])
        }
        return integrity
    }

    /// `PRAGMA quick_check` on a connection of its own, without the readers' memory map (the
    /// check would map and fault in the whole file) and with a small page cache.
    private static func quickCheck(_ path: String) -> Result<String, SQLiteError> {
        do {
            let db = try SQLiteConnection(path: path, options: .init(readOnly: true))
            try db.execute("PRAGMA cell_size_check = ON")
            try db.execute("PRAGMA cache_size = -256")
            let rows = try db.all("PRAGMA quick_check(20)") { try $0.text(0) }
            // Its first answer carries several lines ("*** in database main ***", the pages): a
            // reason fit for one log line names the first few.
            let lines = rows.flatMap { $0.split(whereSeparator: \.isNewline) }.map(String.init).filter { !$0.hasPrefix("***") }
            guard !lines.isEmpty else { return .success(rows.isEmpty ? "no answer" : rows.joined(separator: "; ")) }
            if lines == ["ok"] { return .success("ok") }
            return .success(lines.prefix(4).joined(separator: "; ") + (lines.count > 4 ? "; and \(lines.count - 4) more" : ""))
        } catch let error as SQLiteError {
            return .failure(error)
        } catch {
            return .failure(SQLiteError(code: SQLITE_ERROR, message: "\(error)"))
        }
    }
}
