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
    /// verdict other than "ok" (or a read error) marks the store damaged (`StoreHealth`); "ok" is
    /// remembered in the file (``lastVerification()``, for ``verifyIntegrityWhenDue(intervalMs:)``).
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
            let verification = IntegrityVerification(atMs: Date().timeIntervalSince1970 * 1000, seconds: seconds,
                                                     boot: IntegritySchedule.currentBoot())
            // Remembered before it is reported: whoever sees `verified` (a restart's reader, the
            // status) finds the pass in the file too.
            await remember(verification)
            health.set(.verified(atMs: verification.atMs, seconds: seconds))
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

    /// Runs ``verifyIntegrity()`` whenever ``IntegritySchedule`` says it is due, until the task is
    /// cancelled or the store is damaged. A check this boot remembered (a restart) is not redone:
    /// the state says `verified` from it, and the next one comes `intervalMs` after it.
    public func verifyIntegrityWhenDue(intervalMs: Double = IntegritySchedule.defaultIntervalMs) async {
        if let last = await lastVerification() {
            let delay = IntegritySchedule.delayMs(after: last, boot: IntegritySchedule.currentBoot(),
                                                  nowMs: Date().timeIntervalSince1970 * 1000, intervalMs: intervalMs)
            if delay > 0 {
                health.set(.verified(atMs: last.atMs, seconds: last.seconds))
                logger.info("store integrity: verified earlier in this boot, not checked again at this start", metadata: [
                    "subsystem": "store", "verifiedAtMs": "\(Int(last.atMs))", "nextInSeconds": "\(Int(delay / 1000))",
                ])
                do { try await Task.sleep(for: .milliseconds(Int64(delay))) } catch { return }
            }
        }
        // Paced from here on by the loop itself: a check that could not record its result (a
        // full disk) or did not run (no thread) waits its interval too, not a loop of reads.
        while !Task.isCancelled, !integrity.isDamaged {
            _ = await verifyIntegrity()
            do { try await Task.sleep(for: .milliseconds(Int64(intervalMs))) } catch { return }
        }
    }

    /// The last full check that passed, as this store file remembers it; `nil` if none did (or
    /// the rows cannot be read: then the check runs, which is the safe side).
    public func lastVerification() async -> IntegrityVerification? {
        let rows = try? await read("reading the last integrity check") { db in
            try db.all("SELECT name, value FROM counter WHERE name LIKE 'integrityCheck.%'") { (try $0.text(0), try $0.int64(1)) }
        }
        let values = Dictionary(rows ?? [], uniquingKeysWith: { first, _ in first })
        guard let atMs = values[IntegrityVerification.atMsCounter] else { return nil }
        return IntegrityVerification(atMs: Double(atMs), seconds: Double(values[IntegrityVerification.millisecondsCounter] ?? 0) / 1000,
                                     boot: values[IntegrityVerification.bootCounter])
    }

    /// Writes the check's result into the file it checked, so that it travels with the file (a
    /// store moved aside and a new one started begins without one). Best effort: a store that
    /// cannot take the write (full) checks again at its next start.
    private func remember(_ verification: IntegrityVerification) async {
        var rows: [(String, Int64)] = [(IntegrityVerification.atMsCounter, Int64(verification.atMs)),
                                       (IntegrityVerification.millisecondsCounter, Int64(verification.seconds * 1000))]
        if let boot = verification.boot { rows.append((IntegrityVerification.bootCounter, boot)) }
        let written = rows
        do {
            try await write { db in
                try db.run("DELETE FROM counter WHERE name LIKE 'integrityCheck.%'")
                for (name, value) in written { try db.run("INSERT INTO counter (name, value) VALUES (?, ?)", [name, value]) }
            }
        } catch {
            logger.warning("store integrity check: could not record its result; the next start checks again", metadata: [
                "subsystem": "store", "error": "\(error)",
            ])
        }
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
