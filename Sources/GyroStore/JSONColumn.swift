import JSON
import CaptureValues

/// The small JSON columns of sessions and chunks: hazard counts and gap ranges.
///
/// Read with the JSON module's parser rather than Foundation's JSONDecoder: nothing else in a
/// running gateway uses JSONDecoder, and its code would be mapped into every gateway's memory
/// for these few bytes per session.
public enum JSONColumn {
    public static func text(_ hazards: [String: Int]) -> String {
        guard !hazards.isEmpty else { return "{}" }
        return text(.object(hazards.mapValues { $0.jsonValue }))
    }

    public static func text(_ gaps: [GapRange]) -> String {
        guard !gaps.isEmpty else { return "[]" }
        return text(.array(gaps.map { gap in
            [
                "stream": .string(gap.stream), "fromIndex": .integer(gap.fromIndex), "toIndex": .integer(gap.toIndex),
                "fromMs": .number(gap.fromMs), "toMs": .number(gap.toMs), "missing": .integer(gap.missing),
                "reason": .string(gap.reason.rawValue),
            ]
        }))
    }

    public static func hazards(_ text: String?) throws(JSONError) -> [String: Int] {
        guard let object = try value(text, column: "hazards").object else {
            throw JSONError("the hazards column is not a JSON object")
        }
        var counts: [String: Int] = [:]
        for (name, value) in object {
            guard let count = value.int else { throw JSONError("the hazards column has a count that is not an integer: \(value.text)") }
            counts[name] = count
        }
        return counts
    }

    public static func gaps(_ text: String?) throws(JSONError) -> [GapRange] {
        guard let items = try value(text, column: "gaps").array else {
            throw JSONError("the gaps column is not a JSON array")
        }
        var gaps: [GapRange] = []
        for item in items {
            guard let stream = item["stream"]?.string, let fromIndex = item["fromIndex"]?.int64,
                  let toIndex = item["toIndex"]?.int64, let fromMs = item["fromMs"]?.double, let toMs = item["toMs"]?.double,
                  let missing = item["missing"]?.int64, let reason = item["reason"]?.string else {
                throw JSONError("the gaps column has a range without stream, fromIndex, toIndex, fromMs, toMs, missing or reason: \(item.text)")
            }
            gaps.append(GapRange(stream: stream, fromIndex: fromIndex, toIndex: toIndex, fromMs: fromMs, toMs: toMs, missing: missing, reason: GapReason(rawValue: reason)))
        }
        return gaps
    }

    private static func text(_ value: JSONValue) -> String {
        String(decoding: value.encoded(), as: UTF8.self)
    }

    /// NULL (a column never written) reads as an empty container.
    private static func value(_ text: String?, column: String) throws(JSONError) -> JSONValue {
        guard let text else { return column == "gaps" ? .array([]) : .object([:]) }
        do {
            return try JSONValue(parsing: text.utf8)
        } catch {
            throw JSONError("the \(column) column is not valid JSON: \(error.reason)")
        }
    }
}
