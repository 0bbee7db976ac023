/// A malformed part of advertising data. The advertiser is at fault; parsing keeps what it can.
public enum AdvertisingDataIssue: Equatable, Sendable {
    /// An AD structure's length runs past the end of the data; parsing stopped at `offset`.
    case truncatedStructure(offset: Int, declaredLength: Int, available: Int)
    /// A structure's data does not fit its type's format (for example a UUID list whose length
    /// is not a multiple of the UUID size); the structure is kept raw in ``AdvertisingData/structures``.
    case malformedField(type: ADType, offset: Int, reason: String)
}

extension AdvertisingDataIssue: CustomStringConvertible {
    public var description: String {
        switch self {
        case let .truncatedStructure(offset, declaredLength, available):
            return "AD structure at offset \(offset) declares \(declaredLength) byte(s) but only \(available) remain"
        case let .malformedField(type, offset, reason):
            return "AD type 0x\(String(type.rawValue, radix: 16)) at offset \(offset) is malformed: \(reason)"
        }
    }
}
