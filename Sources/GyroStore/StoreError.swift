/// Failures of the store, each saying what an operator can do about it.
public enum StoreError: Error, CustomStringConvertible, Sendable {
    /// The data directory could not be created or written.
    case directory(path: String, reason: String)
    /// SQLite refused an operation; `context` names what the store was doing.
    case database(context: String, reason: String)
    /// The filesystem of the data directory is full, or refused a write (SQLITE_FULL, SQLITE_IOERR).
    case full(context: String, reason: String)
    /// A document path that is not `collection/doc[/collection/doc…]`.
    case invalidPath(String, reason: String)
    /// A stored blob that does not decode: the file was damaged outside SQLite's checks.
    case damagedSamples(chunk: String, reason: String)
    case unknownSession(String)
    /// SQLite found the store file damaged (at open, in the background check, or in a read or
    /// write since): the store takes no more writes, and the next start moves the file aside.
    case damaged(reason: String)

    public var description: String {
        switch self {
        case .directory(let path, let reason): "store: cannot use data directory \(path): \(reason); check that it exists and is writable by this user"
        case .database(let context, let reason): "store: \(context) failed: \(reason)"
        case .full(let context, let reason):
            "store: \(context) failed: the disk of the data directory is full or refuses writes (\(reason)); the gateway frees space by "
                + "pruning published chunks, then evicting the oldest unpublished ones as storeFull gaps; free space on that "
                + "filesystem or move dataDirectory to a larger one"
        case .invalidPath(let path, let reason): "store: \"\(path)\" is not a document path: \(reason)"
        case .damagedSamples(let chunk, let reason): "store: samples of chunk \(chunk) are damaged: \(reason)"
        case .unknownSession(let id): "store: no session \(id)"
        case .damaged(let reason):
            "store: the store file is damaged (\(reason)); it takes no more writes. Start the gateway again (under systemd it is "
                + "restarted by itself): at its start it moves the file aside as store.sqlite.corrupt-<time> and begins a new store; "
                + "what the old file holds can be read back with sqlite3 store.sqlite.corrupt-<time> .recover"
        }
    }
}

extension StoreError {
    /// Whether writing failed for want of space (or the disk refused a write): a condition the
    /// store can relieve by freeing space, unlike a damaged file or a programming error.
    public var isFull: Bool {
        if case .full = self { return true }
        return false
    }

    /// `error` from SQLite while doing `context`, as the error an operator can act on.
    static func wrapping(_ error: any Error, context: String) -> StoreError {
        if let error = error as? StoreError { return error }
        if let error = error as? SQLiteError, error.isCorruption {
            return .damaged(reason: "\(context): \(error)")
        }
        if let error = error as? SQLiteError, error.isFull {
            return .full(context: context, reason: "\(error)")
        }
        return .database(context: context, reason: "\(error)")
    }
}
