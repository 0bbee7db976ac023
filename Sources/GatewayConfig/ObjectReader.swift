import JSON

/// Collects problems while a configuration tree is read.
final class ProblemSink {
    private(set) var problems: [ConfigProblem] = []
    func add(_ path: String, _ message: String) { problems.append(ConfigProblem(path: path, message: message)) }
}

/// Reads one JSON object of the configuration: known keys only, typed accessors that report
/// missing keys, wrong types and out-of-range values by key path and fall back to a default so
/// that reading goes on and every problem is reported at once.
struct ObjectReader {
    let path: String
    let values: [String: JSONValue]
    let sink: ProblemSink

    init?(_ value: JSONValue?, path: String, keys: [String], sink: ProblemSink) {
        self.path = path
        self.sink = sink
        guard let value else { return nil }
        guard case .object(let values) = value else {
            if value != .null { sink.add(path, "expected an object, found \(value.typeName)") }
            return nil
        }
        self.values = values
        for key in values.keys.sorted() where !keys.contains(key) {
            let hint = KeySuggestion.closest(to: key, among: keys).map { "; did you mean \"\($0)\"?" } ?? ""
            sink.add(child(key), "unknown key\(hint) (known keys: \(keys.joined(separator: ", ")))")
        }
    }

    func child(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    func has(_ key: String) -> Bool { values[key].map { $0 != .null } ?? false }

    func object(_ key: String, keys: [String]) -> ObjectReader? {
        ObjectReader(values[key], path: child(key), keys: keys, sink: sink)
    }

    /// A string; `nil` default makes the key required.
    func string(_ key: String, default fallback: String?) -> String? {
        switch values[key] {
        case .string(let text)?: return text
        case nil, .null?:
            if fallback == nil { sink.add(child(key), "required key is missing (expected a string)") }
            return fallback
        case let other?:
            sink.add(child(key), "expected a string, found \(other.typeName)")
            return fallback
        }
    }

    func optionalString(_ key: String) -> String? {
        guard has(key) else { return nil }
        return string(key, default: "")
    }

    func bool(_ key: String, default fallback: Bool) -> Bool {
        switch values[key] {
        case .bool(let flag)?: return flag
        case nil, .null?: return fallback
        case let other?:
            sink.add(child(key), "expected true or false, found \(other.typeName)")
            return fallback
        }
    }

    func integer(_ key: String, default fallback: Int, in range: ClosedRange<Int>, unit: String = "") -> Int {
        switch values[key] {
        case .integer(let number)?:
            guard let value = Int(exactly: number), range.contains(value) else {
                sink.add(child(key), "\(number)\(unit) is out of range; expected \(range.lowerBound) to \(range.upperBound)\(unit)")
                return fallback
            }
            return value
        case .number(let number)?:
            sink.add(child(key), "expected a whole number, found \(number)")
            return fallback
        case nil, .null?: return fallback
        case let other?:
            sink.add(child(key), "expected a number, found \(other.typeName)")
            return fallback
        }
    }

    /// A number from a fixed set (sensor rates and ranges).
    func choice(_ key: String, default fallback: Double, among allowed: [Double], unit: String) -> Double {
        let value: Double
        switch values[key] {
        case .integer(let number)?: value = Double(number)
        case .number(let number)?: value = number
        case nil, .null?: return fallback
        case let other?:
            sink.add(child(key), "expected a number, found \(other.typeName)")
            return fallback
        }
        guard allowed.contains(value) else {
            let list = allowed.map { formatNumber($0) }.joined(separator: ", ")
            sink.add(child(key), "\(formatNumber(value)) \(unit) is not supported; expected one of \(list)")
            return fallback
        }
        return value
    }

    func double(_ key: String, in range: ClosedRange<Double>) -> Double? {
        let value: Double
        switch values[key] {
        case .integer(let number)?: value = Double(number)
        case .number(let number)?: value = number
        case nil, .null?:
            sink.add(child(key), "required key is missing (expected a number)")
            return nil
        case let other?:
            sink.add(child(key), "expected a number, found \(other.typeName)")
            return nil
        }
        guard range.contains(value) else {
            sink.add(child(key), "\(formatNumber(value)) is out of range; expected \(formatNumber(range.lowerBound)) to \(formatNumber(range.upperBound))")
            return nil
        }
        return value
    }

    /// The elements of an array, each with its own path (`sensors[2]`).
    func array(_ key: String) -> [(path: String, value: JSONValue)] {
        switch values[key] {
        case .array(let items)?: return items.enumerated().map { ("\(child(key))[\($0.offset)]", $0.element) }
        case nil, .null?: return []
        case let other?:
            sink.add(child(key), "expected an array, found \(other.typeName)")
            return []
        }
    }
}

func formatNumber(_ value: Double) -> String {
    value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
}
