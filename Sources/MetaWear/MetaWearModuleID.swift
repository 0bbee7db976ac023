/// A MetaWear module identifier: byte 0 of every command and notification (protocol reference, 2.3).
///
/// An open set, like NIO's `WebSocketOpcode`: any byte is representable, so ids this code does not
/// know survive decoding and print as `unknown(0xNN)`.
public struct MetaWearModuleID: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    public var rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let `switch` = MetaWearModuleID(0x01)
    public static let led = MetaWearModuleID(0x02)
    public static let accelerometer = MetaWearModuleID(0x03)
    public static let temperature = MetaWearModuleID(0x04)
    public static let gpio = MetaWearModuleID(0x05)
    public static let neoPixel = MetaWearModuleID(0x06)
    public static let iBeacon = MetaWearModuleID(0x07)
    public static let haptic = MetaWearModuleID(0x08)
    public static let dataProcessor = MetaWearModuleID(0x09)
    public static let event = MetaWearModuleID(0x0A)
    public static let logging = MetaWearModuleID(0x0B)
    public static let timer = MetaWearModuleID(0x0C)
    public static let serialPassthrough = MetaWearModuleID(0x0D)
    public static let macro = MetaWearModuleID(0x0F)
    public static let conductance = MetaWearModuleID(0x10)
    public static let settings = MetaWearModuleID(0x11)
    public static let barometer = MetaWearModuleID(0x12)
    public static let gyro = MetaWearModuleID(0x13)
    public static let ambientLight = MetaWearModuleID(0x14)
    public static let magnetometer = MetaWearModuleID(0x15)
    public static let humidity = MetaWearModuleID(0x16)
    public static let color = MetaWearModuleID(0x17)
    public static let proximity = MetaWearModuleID(0x18)
    public static let sensorFusion = MetaWearModuleID(0x19)
    public static let debug = MetaWearModuleID(0xFE)

    /// The SDK name of a known module, or `nil`.
    public var name: String? {
        switch rawValue {
        case 0x01: "switch"
        case 0x02: "led"
        case 0x03: "accelerometer"
        case 0x04: "temperature"
        case 0x05: "gpio"
        case 0x06: "neoPixel"
        case 0x07: "iBeacon"
        case 0x08: "haptic"
        case 0x09: "dataProcessor"
        case 0x0A: "event"
        case 0x0B: "logging"
        case 0x0C: "timer"
        case 0x0D: "serialPassthrough"
        case 0x0F: "macro"
        case 0x10: "conductance"
        case 0x11: "settings"
        case 0x12: "barometer"
        case 0x13: "gyro"
        case 0x14: "ambientLight"
        case 0x15: "magnetometer"
        case 0x16: "humidity"
        case 0x17: "color"
        case 0x18: "proximity"
        case 0x19: "sensorFusion"
        case 0xFE: "debug"
        default: nil
        }
    }

    public var description: String { name ?? "unknown(0x\(Hex.byte(rawValue)))" }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}
