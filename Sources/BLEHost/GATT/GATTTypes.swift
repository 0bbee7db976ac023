import BluetoothWire

/// A primary service found by discovery, Core v5.4, Vol 3, Part G, 4.4.
public struct GATTService: Sendable, Hashable {
    public var uuid: BluetoothUUID
    /// The service declaration's handle, and the last handle of the group.
    public var startHandle: UInt16
    public var endHandle: UInt16

    public init(uuid: BluetoothUUID, startHandle: UInt16, endHandle: UInt16) {
        self.uuid = uuid
        self.startHandle = startHandle
        self.endHandle = endHandle
    }
}

/// Characteristic Properties, Core v5.4, Vol 3, Part G, 3.3.1.1.
public struct GATTCharacteristicProperties: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let broadcast = Self(rawValue: 0x01)
    public static let read = Self(rawValue: 0x02)
    public static let writeWithoutResponse = Self(rawValue: 0x04)
    public static let write = Self(rawValue: 0x08)
    public static let notify = Self(rawValue: 0x10)
    public static let indicate = Self(rawValue: 0x20)
    public static let authenticatedSignedWrites = Self(rawValue: 0x40)
    public static let extendedProperties = Self(rawValue: 0x80)
}

/// A characteristic found by discovery, Core v5.4, Vol 3, Part G, 3.3.
public struct GATTCharacteristic: Sendable, Hashable {
    public var uuid: BluetoothUUID
    /// The characteristic declaration's handle.
    public var declarationHandle: UInt16
    /// The value's handle: what reads, writes and notifications use.
    public var valueHandle: UInt16
    /// The last handle of the characteristic (its descriptors lie in valueHandle+1...endHandle).
    public var endHandle: UInt16
    public var properties: GATTCharacteristicProperties

    public init(uuid: BluetoothUUID, declarationHandle: UInt16, valueHandle: UInt16, endHandle: UInt16,
                properties: GATTCharacteristicProperties) {
        self.uuid = uuid
        self.declarationHandle = declarationHandle
        self.valueHandle = valueHandle
        self.endHandle = endHandle
        self.properties = properties
    }
}

/// A characteristic descriptor, Core v5.4, Vol 3, Part G, 3.3.3.
public struct GATTDescriptor: Sendable, Hashable {
    public var uuid: BluetoothUUID
    public var handle: UInt16

    public init(uuid: BluetoothUUID, handle: UInt16) {
        self.uuid = uuid
        self.handle = handle
    }

    /// Client Characteristic Configuration, 0x2902.
    public static let clientCharacteristicConfigurationUUID = BluetoothUUID(uuid16: 0x2902)
}
