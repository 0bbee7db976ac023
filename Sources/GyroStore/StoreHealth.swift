import FoundationEssentials
import Logging
import PosixThreads
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How far the store's file has been checked, and whether it was found damaged.
public enum StoreIntegrity: Sendable, Equatable {
    /// Opened after the bounded checks (`StoreOpenCheck`, `CheckpointCheck`); the full check
    /// has not run yet.
    case openChecked
    /// The full check (``GyroStore/verifyIntegrity()``) is reading the file, since `sinceMs`.
    case checking(sinceMs: Double)
    /// The full check found the whole file sound at `atMs`, in `seconds`.
    case verified(atMs: Double, seconds: Double)
    /// SQLite found the file damaged (the full check, or any read or write since the store
    /// opened). The store takes no more writes; the next start moves the file aside.
    case damaged(sinceMs: Double, reason: String)

    public var isDamaged: Bool {
        if case .damaged = self { return true }
        return false
    }
}

/// The store's integrity as it is known now, shared by every copy of the ``GyroStore`` value.
///
/// Damage is made to last: a marker file beside the store (`store.sqlite.damaged`, its reason
/// inside) makes the next ``GyroStore/open(directory:maxBytes:reserveBytes:logger:)`` move the
/// file aside instead of trusting it again, whatever the bounded checks at open would find.
final class StoreHealth: Sendable {
    static let markerSuffix = ".damaged"

    private struct State {
        var integrity = StoreIntegrity.openChecked
        var waiters: [Int: CheckedContinuation<String?, Never>] = [:]
        var nextWaiter = 0
    }

    private let state = LockedState(State())
    /// `store.sqlite.damaged` beside the store; `nil` for an in-memory store.
    let markerPath: String?
    let logger: Logger

    init(databasePath: String?, logger: Logger) {
        markerPath = databasePath.map { $0 + Self.markerSuffix }
        self.logger = logger
    }

    var integrity: StoreIntegrity { state.withLock { $0.integrity } }

    /// Records `reason` once: the state, the marker file (synced), a critical log line, and the
    /// callers of ``untilDamaged()``.
    func markDamaged(_ reason: String) {
        let now = Date().timeIntervalSince1970 * 1000
        let waiters = state.withLock { state -> [CheckedContinuation<String?, Never>]? in
            guard !state.integrity.isDamaged else { return nil }
            state.integrity = .damaged(sinceMs: now, reason: reason)
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        guard let waiters else { return }
        if let markerPath { Self.writeMarker(markerPath, reason: reason) }
        logger.critical("store file is damaged: it takes no more writes, and the next start moves it aside", metadata: [
            "subsystem": "store", "reason": "\(reason)", "marker": "\(markerPath ?? "-")",
        ])
        for waiter in waiters { waiter.resume(returning: reason) }
    }

    func set(_ integrity: StoreIntegrity) {
        state.withLock { state in
            if !state.integrity.isDamaged { state.integrity = integrity }
        }
    }

    /// Returns the reason once the store is found damaged (at once if it is), or `nil` when the
    /// calling task is cancelled first.
    func untilDamaged() async -> String? {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
                let answer = state.withLock { state -> String?? in
                    if case .damaged(_, let reason) = state.integrity { return .some(reason) }
                    if Task.isCancelled { return .some(nil) }
                    state.waiters[id] = continuation
                    return .none
                }
                if let answer { continuation.resume(returning: answer) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(returning: nil)
        }
    }

    /// Throws ``StoreError/damaged(reason:)`` once the store is damaged: nothing more is written
    /// into a file SQLite found damaged, where a write could spread the damage.
    func refuseWritesIfDamaged() throws(StoreError) {
        if case .damaged(_, let reason) = integrity { throw .damaged(reason: reason) }
    }

    /// The reason in a marker the previous run left, or `nil`.
    static func marker(databasePath: String) -> String? {
        let path = databasePath + markerSuffix
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let text = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).joined(separator: " ")
        return text.isEmpty ? "marked damaged" : text
    }

    private static func writeMarker(_ path: String, reason: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let bytes = Array(reason.utf8) + [10]
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        _ = fsync(fd)
    }
}
