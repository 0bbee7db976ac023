/// A strict RFC 8259 reader of one JSON text in UTF-8, by recursive descent over the bytes.
///
/// It exists because FoundationEssentials' JSONDecoder says only that a document is invalid,
/// while people editing a configuration file need to be told where: every error names what is
/// wrong and its line and column (`TextPosition`). Every read of `bytes` checks its index first,
/// so no input traps; nesting is limited so that no input exhausts the stack.
///
/// Beyond the RFC's grammar: a leading UTF-8 byte order mark is skipped (as JSONDecoder did, and
/// as editors on Windows write it), and a repeated key keeps its last value.
struct JSONParser {
    /// Deeper than any configuration or request body, and shallow enough that the recursion
    /// (a few frames per level) stays far from the end of even a small thread stack.
    /// JSONDecoder had the same limit.
    static let maxDepth = 512

    let bytes: [UInt8]
    var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The whole input as one value, with nothing but whitespace after it.
    mutating func parseDocument() throws(JSONError) -> JSONValue {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            index = 3
        } else if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) {
            // What "unexpected character U+00FF" would mean: a file saved by PowerShell's `>`.
            throw JSONError("UTF-16 text (it starts with a UTF-16 byte order mark), expected UTF-8")
        }
        let value = try parseValue(depth: 0, expecting: .value)
        skipWhitespace()
        guard index == bytes.count else { throw unexpected(.endOfDocument) }
        return value
    }

    /// The value starting at the next non-whitespace byte; `depth` counts the containers
    /// around it.
    mutating func parseValue(depth: Int, expecting expectation: Expectation) throws(JSONError) -> JSONValue {
        skipWhitespace()
        guard index < bytes.count else { throw unexpected(expectation) }
        switch bytes[index] {
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        case UInt8(ascii: "t"): try parseLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try parseLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try parseLiteral("null"); return .null
        default: throw unexpected(expectation)
        }
    }

    /// The array whose `[` is at `index`.
    private mutating func parseArray(depth: Int) throws(JSONError) -> JSONValue {
        guard depth <= Self.maxDepth else { throw failure("nesting deeper than \(Self.maxDepth)", at: index) }
        index += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(items)
        }
        var expectation = Expectation.valueOrEndOfArray
        while true {
            items.append(try parseValue(depth: depth, expecting: expectation))
            skipWhitespace()
            guard index < bytes.count else { throw unexpected(.commaOrEndOfArray) }
            switch bytes[index] {
            case UInt8(ascii: ","):
                try skipComma(before: UInt8(ascii: "]"))
                expectation = .value
            case UInt8(ascii: "]"):
                index += 1
                return .array(items)
            default:
                throw unexpected(.commaOrEndOfArray)
            }
        }
    }

    /// The object whose `{` is at `index`.
    private mutating func parseObject(depth: Int) throws(JSONError) -> JSONValue {
        guard depth <= Self.maxDepth else { throw failure("nesting deeper than \(Self.maxDepth)", at: index) }
        index += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        var expectation = Expectation.keyOrEndOfObject
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw unexpected(expectation) }
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw unexpected(.colon) }
            index += 1
            members[key] = try parseValue(depth: depth, expecting: .value)
            skipWhitespace()
            guard index < bytes.count else { throw unexpected(.commaOrEndOfObject) }
            switch bytes[index] {
            case UInt8(ascii: ","):
                try skipComma(before: UInt8(ascii: "}"))
                expectation = .key
            case UInt8(ascii: "}"):
                index += 1
                return .object(members)
            default:
                throw unexpected(.commaOrEndOfObject)
            }
        }
    }

    /// Steps over the comma at `index` and the whitespace after it. A comma right before the
    /// container's end is the most common slip in hand-edited JSON: it gets its own message,
    /// at the comma, which is what to delete.
    private mutating func skipComma(before end: UInt8) throws(JSONError) {
        let comma = index
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == end { throw failure("trailing comma", at: comma) }
    }

    /// `true`, `false` or `null`, whose first letter is at `index`.
    private mutating func parseLiteral(_ word: String) throws(JSONError) {
        for letter in word.utf8 {
            guard index < bytes.count, bytes[index] == letter else { throw unexpected(.literal(word)) }
            index += 1
        }
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): index += 1
            default: return
            }
        }
    }
}
