/// How the parser words an error: what is wrong, where (`TextPosition`), and in parentheses
/// what was expected there or why the character cannot be JSON. Callers prefix the reason with
/// what they were reading: "config.json is not valid JSON: trailing comma at line 7, column 22".
extension JSONParser {
    /// What may come next at the point of an error; spelled out only when one is thrown.
    enum Expectation {
        case value, valueOrEndOfArray, key, keyOrEndOfObject, colon, commaOrEndOfArray, commaOrEndOfObject
        case endOfDocument, digit
        case literal(String)

        var text: String {
            switch self {
            case .value: "a value"
            case .valueOrEndOfArray: "a value or ']'"
            case .key: "a key in double quotes"
            case .keyOrEndOfObject: "a key in double quotes or '}'"
            case .colon: "':' after the key"
            case .commaOrEndOfArray: "',' or ']'"
            case .commaOrEndOfObject: "',' or '}'"
            case .endOfDocument: "the end of the document"
            case .digit: "a digit"
            case .literal(let word): "'\(word)'"
            }
        }

        /// Whether a string may stand here, so that a single quote is probably meant as one.
        var allowsString: Bool {
            switch self {
            case .value, .valueOrEndOfArray, .key, .keyOrEndOfObject: true
            default: false
            }
        }
    }

    /// The byte at `index` (or the end of the input) cannot come next.
    func unexpected(_ expectation: Expectation) -> JSONError {
        guard index < bytes.count else { return failure("unexpected end of input", at: index, hint: "expected \(expectation.text)") }
        guard let character = describeCharacter(at: index) else { return failure("invalid UTF-8", at: index) }
        let hint = switch bytes[index] {
        // Comments and single-quoted strings are what JSON5 and JavaScript habits bring in.
        case UInt8(ascii: "/"): "JSON has no comments"
        case UInt8(ascii: "'") where expectation.allowsString: "JSON strings take double quotes"
        default: "expected \(expectation.text)"
        }
        return failure("unexpected character \(character)", at: index, hint: hint)
    }

    /// "`what` at line L, column C (`hint`)".
    func failure(_ what: String, at offset: Int, hint: String? = nil) -> JSONError {
        let position = TextPosition(offset: offset, in: bytes)
        return JSONError("\(what) at \(position)" + (hint.map { " (\($0))" } ?? ""))
    }

    /// The character at `offset` as a message shows it: printable ASCII in quotes, controls as
    /// code points, anything else both ways (a curly quote or a no-break space pasted from a
    /// document looks like ASCII). Nil when the bytes there are not UTF-8.
    func describeCharacter(at offset: Int) -> String? {
        guard let scalar = scalar(at: offset) else { return nil }
        switch scalar.value {
        case 0x27: return "\"'\""
        case 0x21...0x7E: return "'\(scalar)'"
        case 0...0x7F: return Self.codePoint(scalar.value)
        default: return "'\(scalar)' (\(Self.codePoint(scalar.value)))"
        }
    }

    static func codePoint(_ value: UInt32) -> String {
        let hex = String(value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}
