/// Swift values with one obvious JSON form, so that a document is built from variables as
/// from literals: `["port": port.jsonValue, "endMs": session.endMs.jsonValue]` (nil is null).
public protocol JSONRepresentable {
    var jsonValue: JSONValue { get }
}

extension JSONValue: JSONRepresentable {
    public var jsonValue: JSONValue { self }
}

extension Bool: JSONRepresentable {
    public var jsonValue: JSONValue { .bool(self) }
}

extension String: JSONRepresentable {
    public var jsonValue: JSONValue { .string(self) }
}

extension Substring: JSONRepresentable {
    public var jsonValue: JSONValue { .string(String(self)) }
}

extension Double: JSONRepresentable {
    public var jsonValue: JSONValue { .number(self) }
}

extension BinaryInteger {
    /// An integer; one beyond `Int64` (a `UInt64` near its maximum) as the nearest number.
    public var jsonValue: JSONValue { Int64(exactly: self).map(JSONValue.integer) ?? .number(Double(self)) }
}

extension Int: JSONRepresentable {}
extension Int8: JSONRepresentable {}
extension Int16: JSONRepresentable {}
extension Int32: JSONRepresentable {}
extension Int64: JSONRepresentable {}
extension UInt: JSONRepresentable {}
extension UInt8: JSONRepresentable {}
extension UInt16: JSONRepresentable {}
extension UInt32: JSONRepresentable {}
extension UInt64: JSONRepresentable {}

extension Optional: JSONRepresentable where Wrapped: JSONRepresentable {
    public var jsonValue: JSONValue { map(\.jsonValue) ?? .null }
}

extension Array: JSONRepresentable where Element: JSONRepresentable {
    public var jsonValue: JSONValue { .array(map(\.jsonValue)) }
}

extension Set: JSONRepresentable where Element: JSONRepresentable & Comparable {
    /// Sorted, so that the same set always gives the same bytes.
    public var jsonValue: JSONValue { .array(sorted().map(\.jsonValue)) }
}

extension Dictionary: JSONRepresentable where Key == String, Value: JSONRepresentable {
    public var jsonValue: JSONValue { .object(mapValues(\.jsonValue)) }
}
