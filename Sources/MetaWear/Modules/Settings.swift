/// Settings module (0x11): battery, connection parameters, MAC address (protocol reference, section 5).
public enum Settings {
    /// Register numbers as in `settings_register.h`.
    public enum Register {
        public static let connectionParameters: UInt8 = 0x09
        public static let disconnectEvent: UInt8 = 0x0A
        public static let macAddress: UInt8 = 0x0B
        public static let batteryState: UInt8 = 0x0C
        public static let powerStatus: UInt8 = 0x11
        public static let chargeStatus: UInt8 = 0x12
    }

    /// Battery answer `11 8c <charge %> <voltage mV u16>` (settings revision ≥ 3).
    public struct BatteryState: Hashable, Sendable {
        public var chargePercent: UInt8
        public var voltageMillivolts: UInt16

        public init(chargePercent: UInt8, voltageMillivolts: UInt16) {
            self.chargePercent = chargePercent
            self.voltageMillivolts = voltageMillivolts
        }
    }

    /// `11 8c`: read the battery state. The answer parses as ``MetaWearPacket/battery(_:)``.
    /// (`11 cc`, the silent form, is what the SDK sends without a subscriber; use this one.)
    public static func readBatteryState() -> MetaWearCommand {
        MetaWearCommand(module: .settings, register: MetaWearRegister.read(Register.batteryState))
    }

    /// `11 8b`: read the MAC address (settings revision ≥ 2).
    public static func readMACAddress() -> MetaWearCommand {
        MetaWearCommand(module: .settings, register: MetaWearRegister.read(Register.macAddress))
    }

    /// `11 09 <min u16> <max u16> <latency u16> <timeout u16>`: ask the board to request new
    /// connection parameters. The central (BlueZ) may refuse.
    ///
    /// Intervals are converted to 1.25 ms units and the timeout to 10 ms units, **truncating** in
    /// `Float` arithmetic as the SDK does (`static_cast<uint16_t>(ms / 1.25f)`); out-of-range values
    /// (negative, NaN, above 65535 units) are clamped rather than being undefined as in C++.
    /// For example (750, 1000, 128, 16384) → `11 09 58 02 20 03 80 00 66 06` and
    /// (7.5, 7.5, 0, 6000) → `11 09 06 00 06 00 00 00 58 02`.
    public static func connectionParameters(
        minimumIntervalMilliseconds: Float, maximumIntervalMilliseconds: Float, latency: UInt16,
        supervisionTimeoutMilliseconds: Float
    ) -> MetaWearCommand {
        let values = [
            units(minimumIntervalMilliseconds, step: 1.25), units(maximumIntervalMilliseconds, step: 1.25), latency,
            units(supervisionTimeoutMilliseconds, step: 10),
        ]
        return MetaWearCommand(
            module: .settings, register: Register.connectionParameters,
            payload: values.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] })
    }

    /// The parameters recommended for high-frequency streaming: 7.5 ms, 7.5 ms, 0, 6000 ms.
    public static let streamingConnectionParameters = connectionParameters(
        minimumIntervalMilliseconds: 7.5, maximumIntervalMilliseconds: 7.5, latency: 0,
        supervisionTimeoutMilliseconds: 6000)

    static func units(_ milliseconds: Float, step: Float) -> UInt16 {
        let value = milliseconds / step
        guard value.isFinite else { return value == .infinity ? .max : 0 }
        if value <= 0 { return 0 }
        if value >= 65535 { return .max }
        return UInt16(value)  // truncates toward zero
    }
}

/// A Bluetooth device address, most significant byte first (as printed).
public struct MACAddress: Hashable, Sendable, CustomStringConvertible {
    /// Six bytes, most significant first: `E8:C9:8F:52:7B:07` is `[e8, c9, 8f, 52, 7b, 07]`.
    public var bytes: [UInt8]

    public init(bytes: [UInt8]) {
        precondition(bytes.count == 6, "a MAC address has 6 bytes")
        self.bytes = bytes
    }

    /// From the 7-byte answer payload of `11 8b`: an address-type byte (skipped, as the SDK does),
    /// then the address least significant byte first.
    init(settingsPayload payload: ArraySlice<UInt8>) {
        self.init(bytes: Array(payload.dropFirst().reversed()))
    }

    /// Upper-case, colon separated: `E8:C9:8F:52:7B:07`.
    public var description: String { bytes.map { Hex.byte($0).uppercased() }.joined(separator: ":") }
}
