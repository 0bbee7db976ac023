/// Why a zone could not be had. Each case names the zone or file, so that a configuration
/// error or a test failure says what to fix.
public enum ZoneInfoError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The name cannot be a zone: empty, absolute, with `..`, or with characters no zone has.
    case invalidName(String, reason: String)
    /// No zone file of that name in the zoneinfo folder (nothing, or a folder of zones).
    case unknownZone(String, path: String)
    /// The file exists but cannot be read (permissions, a folder, too large).
    case unreadable(path: String, reason: String)
    /// The file is not a well-formed TZif file (RFC 8536).
    case malformed(path: String, problem: String)
    /// A POSIX TZ rule string (the TZif footer) that does not parse.
    case invalidRule(String, problem: String)

    public var description: String {
        switch self {
        case .invalidName(let name, let reason):
            "\"\(name)\" is not a time zone name: \(reason)"
        case .unknownZone(let name, let path):
            "no time zone \"\(name)\" (no zone file at \(path))"
        case .unreadable(let path, let reason):
            "cannot read the zone file \(path): \(reason)"
        case .malformed(let path, let problem):
            "\(path) is not a valid TZif zone file: \(problem)"
        case .invalidRule(let rule, let problem):
            "the TZ rule \"\(rule)\" is not valid: \(problem)"
        }
    }
}
