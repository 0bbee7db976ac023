/// Routes notifications to ``MetaWearPacket`` values. Bounds-checked: malformed input throws a
/// ``MetaWearPacketError`` naming the header and lengths, and never traps.
///
/// The gyro and accelerometer data registers depend on the chip (BMI160 gyro DATA is 0x05, which
/// is BMI270's PACKED), so the parser needs the register maps from module discovery; without them,
/// gyro and accelerometer data and the accelerometer config read are returned as `.unknown`.
///
/// Lengths are exact for fixed layouts: data 8 bytes, packed 20, config reads 4, battery 5, MAC 9,
/// switch 3, log time 7, log length 6, created ids 3. A read answer with the silent bit
/// (`0xC0 | reg`) is treated like `0x80 | reg`.
public struct MetaWearPacketParser: Hashable, Sendable {
    public var gyroRegisters: Gyro.RegisterMap?
    public var accelerometerRegisters: Accelerometer.RegisterMap?

    public init(gyroRegisters: Gyro.RegisterMap? = nil, accelerometerRegisters: Accelerometer.RegisterMap? = nil) {
        self.gyroRegisters = gyroRegisters
        self.accelerometerRegisters = accelerometerRegisters
    }

    /// A parser for a discovered board.
    public init(boardInfo: BoardInfo) {
        self.init(gyroRegisters: boardInfo.gyroRegisters, accelerometerRegisters: boardInfo.accelerometerRegisters)
    }

    /// Parses one notification.
    public func parse(_ bytes: [UInt8]) throws(MetaWearPacketError) -> MetaWearPacket {
        let count = bytes.count
        guard count >= 2 else { throw .tooShort(length: count) }
        let module = bytes[0]
        let rawRegister = bytes[1]
        // A silent read (0xC0 | reg) is answered under the same header; fold it onto 0x80 | reg.
        let register = rawRegister & 0x80 != 0 ? rawRegister & ~MetaWearRegister.silentBit : rawRegister

        if register == MetaWearRegister.readBit {
            return try parseModuleInfo(bytes)
        }

        switch module {
        case MetaWearModuleID.gyro.rawValue:
            if let map = gyroRegisters {
                if register == map.data {
                    try expect(bytes, 8)
                    return .gyroData(RawTriples(Self.triple(bytes, at: 2)))
                }
                if register == map.packedData {
                    try expect(bytes, 20)
                    return .gyroPacked(Self.packed(bytes))
                }
            }
            if register == MetaWearRegister.read(0x03) {
                try expect(bytes, 4)
                guard Gyro.OutputDataRate(rawValue: bytes[2] & 0x0F) != nil else {
                    throw .invalidValue(module: module, register: register, field: "gyro odr", value: bytes[2])
                }
                guard let config = Gyro.Configuration(confByte: bytes[2], rangeByte: bytes[3]) else {
                    throw .invalidValue(module: module, register: register, field: "gyro range", value: bytes[3])
                }
                return .gyroConfig(config)
            }

        case MetaWearModuleID.accelerometer.rawValue:
            if let map = accelerometerRegisters {
                if register == map.data {
                    try expect(bytes, 8)
                    return .accData(RawTriples(Self.triple(bytes, at: 2)))
                }
                if register == map.packedData {
                    try expect(bytes, 20)
                    return .accPacked(Self.packed(bytes))
                }
                if register == MetaWearRegister.read(map.dataConfig) {
                    try expect(bytes, 4)
                    guard Accelerometer.OutputDataRate(code: bytes[2] & 0x0F) != nil else {
                        throw .invalidValue(module: module, register: register, field: "acc odr", value: bytes[2])
                    }
                    guard
                        let config = Accelerometer.Configuration(
                            confByte: bytes[2], rangeByte: bytes[3], chip: map.chip)
                    else {
                        throw .invalidValue(module: module, register: register, field: "acc range", value: bytes[3])
                    }
                    return .accConfig(config)
                }
            }

        case MetaWearModuleID.settings.rawValue:
            if register == MetaWearRegister.read(Settings.Register.batteryState) {
                try expect(bytes, 5)
                return .battery(
                    Settings.BatteryState(chargePercent: bytes[2], voltageMillivolts: Self.u16(bytes, at: 3)))
            }
            if register == MetaWearRegister.read(Settings.Register.macAddress) {
                try expect(bytes, 9)
                return .macAddress(MACAddress(settingsPayload: bytes[2...]))
            }

        case MetaWearModuleID.switch.rawValue:
            if register == Switch.stateRegister {
                try expect(bytes, 3)
                return .switchState(Switch.State(rawValue: bytes[2]))
            }

        case MetaWearModuleID.logging.rawValue:
            if register == MetaWearRegister.read(Logging.Register.time) {
                try expect(bytes, 7)
                return .logTime(Logging.Time(tick: Self.u32(bytes, at: 2), resetUID: bytes[6]))
            }
            if register == MetaWearRegister.read(Logging.Register.length) {
                try expect(bytes, 6)
                return .logLength(Self.u32(bytes, at: 2))
            }
            if register == Logging.Register.trigger {
                try expect(bytes, 3)
                return .loggerCreated(id: bytes[2])
            }

        case MetaWearModuleID.dataProcessor.rawValue:
            if register == 0x02 {
                try expect(bytes, 3)
                return .processorCreated(id: bytes[2])
            }

        case MetaWearModuleID.event.rawValue:
            if register == 0x02 {
                try expect(bytes, 3)
                return .eventCreated(id: bytes[2])
            }

        default:
            break
        }
        return .unknown(module: MetaWearModuleID(module), register: rawRegister, bytes: bytes)
    }

    private func parseModuleInfo(_ bytes: [UInt8]) throws(MetaWearPacketError) -> MetaWearPacket {
        if bytes.count == 3 {
            throw .unexpectedLength(module: bytes[0], register: bytes[1], expected: 4, actual: 3)
        }
        let id = MetaWearModuleID(bytes[0])
        guard bytes.count > 2 else { return .moduleInfo(id, nil) }
        return .moduleInfo(
            id, ModuleInfo(id: id, implementation: bytes[2], revision: bytes[3], extra: Array(bytes[4...])))
    }

    @inline(__always)
    private func expect(_ bytes: [UInt8], _ length: Int) throws(MetaWearPacketError) {
        guard bytes.count == length else {
            throw .unexpectedLength(module: bytes[0], register: bytes[1], expected: length, actual: bytes.count)
        }
    }

    // Callers have checked the length; indices below are in range.

    @inline(__always)
    static func i16(_ bytes: [UInt8], at offset: Int) -> Int16 {
        Int16(bitPattern: UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) &<< 8)
    }

    @inline(__always)
    static func u16(_ bytes: [UInt8], at offset: Int) -> UInt16 {
        UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) &<< 8
    }

    @inline(__always)
    static func u32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) &<< 8 | UInt32(bytes[offset + 2]) &<< 16
            | UInt32(bytes[offset + 3]) &<< 24
    }

    @inline(__always)
    static func triple(_ bytes: [UInt8], at offset: Int) -> RawTriple {
        RawTriple(x: i16(bytes, at: offset), y: i16(bytes, at: offset + 2), z: i16(bytes, at: offset + 4))
    }

    @inline(__always)
    static func packed(_ bytes: [UInt8]) -> RawTriples {
        RawTriples(triple(bytes, at: 2), triple(bytes, at: 8), triple(bytes, at: 14))
    }
}
