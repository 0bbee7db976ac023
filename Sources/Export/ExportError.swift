import GyroStore

/// Why an export could not be made or finished, each saying what to change.
public enum ExportError: Error, CustomStringConvertible, Sendable {
    case unknownSession(String)
    case badFormat(String)
    case badStream(String)
    case noSessions(String)
    /// CSV is one file per session, board and stream; a stream output can carry one.
    case needsDirectory(files: Int)
    case output(path: String, reason: String)
    case store(StoreError)

    public var description: String {
        switch self {
        case .unknownSession(let id):
            "there is no session \"\(id)\"; `gyrogate sessions --range all` lists the stored ones"
        case .badFormat(let text):
            "the format must be csv, influx or jsonl, not \"\(text.prefix(40))\""
        case .badStream(let text):
            "the stream must be gyro or accelerometer, not \"\(text.prefix(40))\""
        case .noSessions(let selection):
            "no stored session matches \(selection); `gyrogate sessions --range all` lists the stored ones"
        case .needsDirectory(let files):
            "CSV is one file per session, board and stream, and this export makes \(files); name a folder with --out DIR, "
                + "or choose one session and --stream"
        case .output(let path, let reason):
            "cannot write \(path): \(reason); check that the folder exists, is writable by this user and has room"
        case .store(let error):
            "\(error)"
        }
    }
}
