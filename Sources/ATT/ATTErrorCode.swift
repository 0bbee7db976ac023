/// An ATT error code, Core v5.4, Vol 3, Part F, 3.4.1.1 (Table 3.4), plus the common profile
/// codes of the Core Specification Supplement, Part B, 1.2. An open set over the raw octet.
public struct ATTErrorCode: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt8

    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// 0x80...0x9F: defined by the higher layer (the service), not by ATT.
    public var isApplicationError: Bool { (0x80...0x9F).contains(rawValue) }

    public static let invalidHandle = ATTErrorCode(rawValue: 0x01)
    public static let readNotPermitted = ATTErrorCode(rawValue: 0x02)
    public static let writeNotPermitted = ATTErrorCode(rawValue: 0x03)
    public static let invalidPDU = ATTErrorCode(rawValue: 0x04)
    public static let insufficientAuthentication = ATTErrorCode(rawValue: 0x05)
    public static let requestNotSupported = ATTErrorCode(rawValue: 0x06)
    public static let invalidOffset = ATTErrorCode(rawValue: 0x07)
    public static let insufficientAuthorization = ATTErrorCode(rawValue: 0x08)
    public static let prepareQueueFull = ATTErrorCode(rawValue: 0x09)
    public static let attributeNotFound = ATTErrorCode(rawValue: 0x0A)
    public static let attributeNotLong = ATTErrorCode(rawValue: 0x0B)
    public static let encryptionKeySizeTooShort = ATTErrorCode(rawValue: 0x0C)
    public static let invalidAttributeValueLength = ATTErrorCode(rawValue: 0x0D)
    public static let unlikelyError = ATTErrorCode(rawValue: 0x0E)
    public static let insufficientEncryption = ATTErrorCode(rawValue: 0x0F)
    public static let unsupportedGroupType = ATTErrorCode(rawValue: 0x10)
    public static let insufficientResources = ATTErrorCode(rawValue: 0x11)
    public static let databaseOutOfSync = ATTErrorCode(rawValue: 0x12)
    public static let valueNotAllowed = ATTErrorCode(rawValue: 0x13)
    public static let writeRequestRejected = ATTErrorCode(rawValue: 0xFC)
    public static let cccdImproperlyConfigured = ATTErrorCode(rawValue: 0xFD)
    public static let procedureAlreadyInProgress = ATTErrorCode(rawValue: 0xFE)
    public static let outOfRange = ATTErrorCode(rawValue: 0xFF)
}

extension ATTErrorCode: CustomStringConvertible {
    public var description: String {
        let names: [UInt8: String] = [
            0x01: "invalidHandle", 0x02: "readNotPermitted", 0x03: "writeNotPermitted", 0x04: "invalidPDU",
            0x05: "insufficientAuthentication", 0x06: "requestNotSupported", 0x07: "invalidOffset",
            0x08: "insufficientAuthorization", 0x09: "prepareQueueFull", 0x0A: "attributeNotFound",
            0x0B: "attributeNotLong", 0x0C: "encryptionKeySizeTooShort", 0x0D: "invalidAttributeValueLength",
            0x0E: "unlikelyError", 0x0F: "insufficientEncryption", 0x10: "unsupportedGroupType",
            0x11: "insufficientResources", 0x12: "databaseOutOfSync", 0x13: "valueNotAllowed",
            0xFC: "writeRequestRejected", 0xFD: "cccdImproperlyConfigured", 0xFE: "procedureAlreadyInProgress",
            0xFF: "outOfRange",
        ]
        let name = names[rawValue] ?? (isApplicationError ? "applicationError" : "error")
        return "\(name) (0x\(String(rawValue, radix: 16)))"
    }
}
