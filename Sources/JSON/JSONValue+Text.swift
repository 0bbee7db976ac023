/// Why bytes are not the JSON document expected. The description names the source, so that
/// a log line or an answer says which input was wrong.
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String

    public init(_ reason: String) { self.reason = reason }

    public var description: String { reason }
}

/// How `encoded` lays out a document.
public struct JSONLayout: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// One line; an object's members in no particular order.
    public static let compact: JSONLayout = []
    /// Members by key in code point order: the same document always gives the same bytes.
    public static let sortedKeys = JSONLayout(rawValue: 1 << 0)
    /// Indented over several lines, for people.
    public static let prettyPrinted = JSONLayout(rawValue: 1 << 1)
    /// `a/b` instead of `a\/b` (both are valid JSON; topics and paths read better without).
    public static let withoutEscapingSlashes = JSONLayout(rawValue: 1 << 2)
}

extension JSONValue {
    /// Parses one complete JSON text (an object, array or scalar), strictly by RFC 8259.
    /// - throws: `JSONError` whose reason says what is wrong and where ("trailing comma at
    ///   line 7, column 22"); never traps, whatever the bytes.
    public init(parsing bytes: some Sequence<UInt8>) throws(JSONError) {
        var parser = JSONParser(Array(bytes))
        guard !parser.bytes.isEmpty else { throw JSONError("empty, expected a JSON document") }
        self = try parser.parseDocument()
    }

    /// Parses one JSON object; anything else (an array, a scalar, bad bytes) is an error.
    public static func object(parsing bytes: some Sequence<UInt8>) throws(JSONError) -> [String: JSONValue] {
        let value = try JSONValue(parsing: bytes)
        guard let object = value.object else { throw JSONError("expected a JSON object, found \(value.typeName)") }
        return object
    }

    /// The document as UTF-8 JSON text.
    public func encoded(_ layout: JSONLayout = .sortedKeys) -> [UInt8] {
        var writer = JSONTextWriter(layout: layout)
        writer.write(self)
        return writer.bytes
    }
}
