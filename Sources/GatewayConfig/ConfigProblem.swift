/// One thing wrong with a configuration file, named by its key path
/// (`mqtt.tls.caFile`, `sensors[1].address`).
public struct ConfigProblem: Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var message: String

    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}

/// Loading failed: every problem found, not only the first, so one edit can fix them all.
public enum ConfigError: Error, CustomStringConvertible, Sendable {
    case unreadable(path: String, reason: String)
    case notJSON(path: String, reason: String)
    case invalid([ConfigProblem])

    public var problems: [ConfigProblem] {
        switch self {
        case .unreadable(let path, let reason): [ConfigProblem(path: "", message: "cannot read \(path): \(reason)")]
        case .notJSON(let path, let reason): [ConfigProblem(path: "", message: "\(path) is not valid JSON: \(reason)")]
        case .invalid(let problems): problems
        }
    }

    public var description: String { problems.map(\.description).joined(separator: "\n") }
}

/// Suggests the closest known key for a misspelt one ("did you mean").
enum KeySuggestion {
    static func closest(to key: String, among candidates: [String]) -> String? {
        let lowered = key.lowercased()
        let scored = candidates.map { ($0, distance(lowered, $0.lowercased())) }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
        return best.1 <= max(2, key.count / 3) ? best.0 : nil
    }

    /// Levenshtein distance; keys are short, so the quadratic table is fine.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            }
            previous = current
        }
        return previous[b.count]
    }
}
