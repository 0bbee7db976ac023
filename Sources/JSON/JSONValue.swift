/// A JSON document that keeps the distinction between booleans, integers and other numbers:
/// the configuration says exactly which type it found, and an integer is written back as an
/// integer (`3`, never `3.0`).
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// How a problem message names this value's type.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .integer, .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

extension JSONValue: Decodable {
    public init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var items: [JSONValue] = []
            while !array.isAtEnd { items.append(try array.decode(JSONValue.self)) }
            self = .array(items)
            return
        }
        if let object = try? decoder.container(keyedBy: AnyKey.self) {
            var items: [String: JSONValue] = [:]
            for key in object.allKeys { items[key.stringValue] = try object.decode(JSONValue.self, forKey: key) }
            self = .object(items)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() { self = .null }
        else if let value = try? single.decode(Bool.self) { self = .bool(value) }
        else if let value = try? single.decode(Int64.self) { self = .integer(value) }
        else if let value = try? single.decode(Double.self) { self = .number(value) }
        else if let value = try? single.decode(String.self) { self = .string(value) }
        else {
            // Only a number neither Int64 nor Double holds (1e400) gets here.
            throw DecodingError.dataCorruptedError(in: single, debugDescription: "a number is out of range")
        }
    }
}

extension JSONValue: Encodable {
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .bool(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .integer(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .number(let value):
            var single = encoder.singleValueContainer()
            // JSON has no NaN or infinity; null says "unknown" rather than failing the document.
            if value.isFinite { try single.encode(value) } else { try single.encodeNil() }
        case .string(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .array(let items):
            var array = encoder.unkeyedContainer()
            for item in items { try array.encode(item) }
        case .object(let items):
            var object = encoder.container(keyedBy: AnyKey.self)
            for (key, value) in items { try object.encode(value, forKey: AnyKey(stringValue: key)) }
        }
    }
}

/// Object keys as they come: JSON objects have no fixed set of keys.
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
