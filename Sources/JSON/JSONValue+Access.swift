/// Reading a parsed document: each accessor is nil when the value has another type, so a
/// caller says what it expected instead of casting.
extension JSONValue {
    /// The member `key` of an object; nil for a missing key or when this is not an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let items) = self else { return nil }
        return items[key]
    }

    /// The element at `index` of an array; nil when out of range or when this is not an array.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let items) = self, items.indices.contains(index) else { return nil }
        return items[index]
    }

    public var isNull: Bool { self == .null }

    public var bool: Bool? {
        guard case .bool(let value) = self else { return nil }
        return value
    }

    /// An integer, or a number with an exact integer value (`2.0`, as JSON writers may send it).
    public var int64: Int64? {
        switch self {
        case .integer(let value): value
        case .number(let value): Int64(exactly: value)
        default: nil
        }
    }

    /// As `int64`, when it fits an `Int`.
    public var int: Int? { int64.flatMap { Int(exactly: $0) } }

    /// Any number, integers included.
    public var double: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .number(let value): value
        default: nil
        }
    }

    public var string: String? {
        guard case .string(let value) = self else { return nil }
        return value
    }

    public var array: [JSONValue]? {
        guard case .array(let items) = self else { return nil }
        return items
    }

    public var object: [String: JSONValue]? {
        guard case .object(let items) = self else { return nil }
        return items
    }

    /// How a person reads the value in a table: strings without quotes, numbers and booleans
    /// as JSON writes them, containers as compact JSON.
    public var text: String {
        switch self {
        case .string(let value): value
        default: String(decoding: encoded(.compact), as: UTF8.self)
        }
    }
}
