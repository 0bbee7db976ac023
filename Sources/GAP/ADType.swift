/// An advertising data type, Bluetooth Assigned Numbers, 2.3 ("Common Data Types"); formats in
/// the Core Specification Supplement, Part A, 1. An open set over the raw octet.
public struct ADType: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt8

    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    public static let flags = ADType(rawValue: 0x01)
    public static let incompleteListOf16BitServiceUUIDs = ADType(rawValue: 0x02)
    public static let completeListOf16BitServiceUUIDs = ADType(rawValue: 0x03)
    public static let incompleteListOf32BitServiceUUIDs = ADType(rawValue: 0x04)
    public static let completeListOf32BitServiceUUIDs = ADType(rawValue: 0x05)
    public static let incompleteListOf128BitServiceUUIDs = ADType(rawValue: 0x06)
    public static let completeListOf128BitServiceUUIDs = ADType(rawValue: 0x07)
    public static let shortenedLocalName = ADType(rawValue: 0x08)
    public static let completeLocalName = ADType(rawValue: 0x09)
    public static let txPowerLevel = ADType(rawValue: 0x0A)
    public static let serviceData16BitUUID = ADType(rawValue: 0x16)
    public static let appearance = ADType(rawValue: 0x19)
    public static let manufacturerSpecificData = ADType(rawValue: 0xFF)
}

/// One AD structure: a type and its data (Core v5.4, Vol 3, Part C, 11).
public struct ADStructure: Equatable, Sendable {
    public var type: ADType
    public var data: [UInt8]

    public init(type: ADType, data: [UInt8]) {
        self.type = type
        self.data = data
    }
}

/// Manufacturer Specific Data: a company identifier and opaque data (Supplement, Part A, 1.4).
public struct ManufacturerData: Equatable, Sendable {
    /// Assigned by the Bluetooth SIG (MbientLab is 0x067E).
    public var companyIdentifier: UInt16
    public var data: [UInt8]

    public init(companyIdentifier: UInt16, data: [UInt8]) {
        self.companyIdentifier = companyIdentifier
        self.data = data
    }
}
