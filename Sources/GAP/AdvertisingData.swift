import BluetoothWire

/// Parsed advertising or scan response data, Core v5.4, Vol 3, Part C, 11, with the field formats
/// of the Core Specification Supplement, Part A, 1.
///
/// Parsing never throws and never traps: the data comes from any device in radio range. Every
/// well-formed structure is kept in ``structures``; anything malformed is listed in ``issues``
/// and the typed accessors skip it. A zero length octet ends the significant part (11: "the
/// remainder is zero-padded").
public struct AdvertisingData: Equatable, Sendable {
    public private(set) var structures: [ADStructure] = []
    public private(set) var issues: [AdvertisingDataIssue] = []

    public private(set) var flags: UInt8?
    public private(set) var shortenedLocalName: String?
    public private(set) var completeLocalName: String?
    public private(set) var serviceUUIDs: [BluetoothUUID] = []
    /// Whether a *complete* list of some UUID size was present.
    public private(set) var hasCompleteServiceUUIDList = false
    public private(set) var manufacturerData: [ManufacturerData] = []
    /// dBm.
    public private(set) var txPowerLevel: Int8?

    /// The complete name when present, else the shortened one.
    public var localName: String? { completeLocalName ?? shortenedLocalName }

    public init(bytes: some Collection<UInt8>) {
        let bytes = Array(bytes)
        var index = 0
        while index < bytes.count {
            let length = Int(bytes[index])
            if length == 0 { break }
            guard length <= bytes.count - index - 1 else {
                issues.append(.truncatedStructure(offset: index, declaredLength: length, available: bytes.count - index - 1))
                break
            }
            let structure = ADStructure(type: ADType(rawValue: bytes[index + 1]),
                                        data: Array(bytes[index + 2..<index + 1 + length]))
            structures.append(structure)
            interpret(structure, offset: index)
            index += 1 + length
        }
    }

    private mutating func interpret(_ structure: ADStructure, offset: Int) {
        let data = structure.data
        switch structure.type {
        case .flags:
            guard let first = data.first else { return malformed(structure, offset, "empty flags") }
            flags = first
        case .shortenedLocalName:
            shortenedLocalName = String(decoding: data, as: UTF8.self)
        case .completeLocalName:
            completeLocalName = String(decoding: data, as: UTF8.self)
        case .txPowerLevel:
            guard data.count == 1 else { return malformed(structure, offset, "TX power must be 1 octet") }
            txPowerLevel = Int8(bitPattern: data[0])
        case .manufacturerSpecificData:
            guard data.count >= 2 else { return malformed(structure, offset, "missing 2-octet company identifier") }
            manufacturerData.append(ManufacturerData(companyIdentifier: UInt16(data[0]) | UInt16(data[1]) << 8,
                                                     data: Array(data[2...])))
        case .incompleteListOf16BitServiceUUIDs, .completeListOf16BitServiceUUIDs:
            appendUUIDs(structure, offset: offset, size: 2)
        case .incompleteListOf32BitServiceUUIDs, .completeListOf32BitServiceUUIDs:
            appendUUIDs(structure, offset: offset, size: 4)
        case .incompleteListOf128BitServiceUUIDs, .completeListOf128BitServiceUUIDs:
            appendUUIDs(structure, offset: offset, size: 16)
        default:
            break
        }
    }

    private mutating func appendUUIDs(_ structure: ADStructure, offset: Int, size: Int) {
        guard structure.data.count % size == 0 else {
            return malformed(structure, offset, "UUID list of \(structure.data.count) octets is not a multiple of \(size)")
        }
        var reader = ByteReader(structure.data)
        while !reader.isAtEnd {
            // Cannot fail: the length was checked above.
            switch size {
            case 2: if let v = try? reader.readUInt16() { serviceUUIDs.append(BluetoothUUID(uuid16: v)) }
            case 4: if let v = try? reader.readUInt32() { serviceUUIDs.append(BluetoothUUID(uuid32: v)) }
            default: if let u = try? BluetoothUUID(from: &reader, format: .bits128) { serviceUUIDs.append(u) }
            }
        }
        if structure.type.rawValue & 1 == 1 { hasCompleteServiceUUIDList = true }
    }

    private mutating func malformed(_ structure: ADStructure, _ offset: Int, _ reason: String) {
        issues.append(.malformedField(type: structure.type, offset: offset, reason: reason))
    }

    /// Encodes structures back to bytes (length, type, data each).
    public static func encode(_ structures: [ADStructure]) -> [UInt8] {
        var bytes: [UInt8] = []
        for structure in structures {
            precondition(structure.data.count < 255, "AD structure data too long")
            bytes.append(UInt8(structure.data.count + 1))
            bytes.append(structure.type.rawValue)
            bytes.append(contentsOf: structure.data)
        }
        return bytes
    }
}
