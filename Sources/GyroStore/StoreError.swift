/// Failures of the store, each saying what an operator can do about it.
public enum StoreError: Error, CustomStringConvertible, Sendable {
    /// The data directory could not be created or written.
    case directory(path: String, reason: String)
    /// SQLite refused an operation; `context` names what the store was doing.
    case database(context: String, reason: String)
    /// A document path that is not `collection/doc[/collection/doc…]`.
    case invalidPath(String, reason: String)
    /// A stored blob that does not decode: the file was damaged outside SQLite's checks.
    case damagedSamples(chunk: String, reason: String)
    case unknownSession(String)

    public var description: String {
        switch self {
        case .directory(let path, let reason): "store: cannot use data directory \(path): \(reason); check that it exists and is writable by this user"
        case .database(let context, let reason): "store: \(context) failed: \(reason)"
        case .invalidPath(let path, let reason): "store: \"\(path)\" is not a document path: \(reason)"
        case .damagedSamples(let chunk, let reason): "store: samples of chunk \(chunk) are damaged: \(reason)"
        case .unknownSession(let id): "store: no session \(id)"
        }
    }
}
