/// Writes a ``JSONValue`` as JSON text, byte for byte what Foundation's JSONEncoder writes for
/// the same layout.
///
/// Why not JSONEncoder: the gateway encodes a few small documents (admin answers, the JSON
/// columns of sessions and chunks) while it streams, and JSONEncoder goes through Codable's
/// containers for each value; its code and the generic machinery under it were pages of every
/// gateway's memory. The output stays the same because subscribers, the CLI and tests compare it.
struct JSONTextWriter {
    private(set) var bytes: [UInt8] = []
    private let sortedKeys: Bool
    private let pretty: Bool
    private let escapeSlashes: Bool

    init(layout: JSONLayout) {
        sortedKeys = layout.contains(.sortedKeys)
        pretty = layout.contains(.prettyPrinted)
        escapeSlashes = !layout.contains(.withoutEscapingSlashes)
    }

    mutating func write(_ value: JSONValue, depth: Int = 0) {
        switch value {
        case .null: append("null")
        case .bool(let flag): append(flag ? "true" : "false")
        case .integer(let number): append(String(number))
        case .number(let number): writeNumber(number)
        case .string(let text): writeString(text)
        case .array(let items):
            bytes.append(UInt8(ascii: "["))
            for (position, item) in items.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                startLine(depth + 1)
                write(item, depth: depth + 1)
            }
            close(UInt8(ascii: "]"), depth: depth, empty: items.isEmpty)
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            let ordered = sortedKeys ? members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) } : Array(members)
            for (position, member) in ordered.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                startLine(depth + 1)
                writeString(member.key)
                append(pretty ? " : " : ":")
                write(member.value, depth: depth + 1)
            }
            close(UInt8(ascii: "}"), depth: depth, empty: members.isEmpty)
        }
    }

    /// JSON has no NaN or infinity: null says "unknown" rather than failing the document. A
    /// whole number drops the `.0` that Swift's shortest round-trip form gives it.
    private mutating func writeNumber(_ number: Double) {
        guard number.isFinite else { return append("null") }
        let text = number.description
        append(text.hasSuffix(".0") ? String(text.dropLast(2)) : text)
    }

    private mutating func writeString(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): append("\\\"")
            case UInt8(ascii: "\\"): append("\\\\")
            case UInt8(ascii: "/") where escapeSlashes: append("\\/")
            case 0x08: append("\\b")
            case 0x0C: append("\\f")
            case 0x0A: append("\\n")
            case 0x0D: append("\\r")
            case 0x09: append("\\t")
            case 0..<0x20:
                let digits = Array("0123456789abcdef".utf8)
                append("\\u00")
                bytes.append(digits[Int(byte >> 4)])
                bytes.append(digits[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Pretty printing puts every member on its own line, indented two spaces per level.
    private mutating func startLine(_ depth: Int) {
        guard pretty else { return }
        bytes.append(0x0A)
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * depth))
    }

    /// An empty container is `[]` in one line, and an empty line between its brackets when pretty.
    private mutating func close(_ bracket: UInt8, depth: Int, empty: Bool) {
        if pretty, empty { bytes.append(0x0A) }
        startLine(depth)
        bytes.append(bracket)
    }

    private mutating func append(_ text: String) { bytes.append(contentsOf: text.utf8) }
}
