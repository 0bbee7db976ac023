/// An HCI event code, Core v5.4, Vol 4, Part E, 7.7. An open set over the raw octet.
public struct HCIEventCode: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt8

    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    public static let disconnectionComplete = HCIEventCode(rawValue: 0x05)
    public static let encryptionChange = HCIEventCode(rawValue: 0x08)
    public static let readRemoteVersionInformationComplete = HCIEventCode(rawValue: 0x0C)
    public static let commandComplete = HCIEventCode(rawValue: 0x0E)
    public static let commandStatus = HCIEventCode(rawValue: 0x0F)
    public static let hardwareError = HCIEventCode(rawValue: 0x10)
    public static let numberOfCompletedPackets = HCIEventCode(rawValue: 0x13)
    public static let dataBufferOverflow = HCIEventCode(rawValue: 0x1A)
    public static let leMeta = HCIEventCode(rawValue: 0x3E)
}

extension HCIEventCode: CustomStringConvertible {
    public var description: String {
        let names: [UInt8: String] = [
            0x05: "disconnectionComplete", 0x08: "encryptionChange", 0x0C: "readRemoteVersionInformationComplete",
            0x0E: "commandComplete", 0x0F: "commandStatus", 0x10: "hardwareError",
            0x13: "numberOfCompletedPackets", 0x1A: "dataBufferOverflow", 0x3E: "leMeta",
        ]
        return "\(names[rawValue] ?? "event") (0x\(String(rawValue, radix: 16)))"
    }
}

/// An LE Meta event subevent code, Core v5.4, Vol 4, Part E, 7.7.65. An open set.
public struct LESubeventCode: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt8

    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    public static let connectionComplete = LESubeventCode(rawValue: 0x01)
    public static let advertisingReport = LESubeventCode(rawValue: 0x02)
    public static let connectionUpdateComplete = LESubeventCode(rawValue: 0x03)
    public static let readRemoteFeaturesComplete = LESubeventCode(rawValue: 0x04)
    public static let remoteConnectionParameterRequest = LESubeventCode(rawValue: 0x06)
    public static let dataLengthChange = LESubeventCode(rawValue: 0x07)
    public static let enhancedConnectionComplete = LESubeventCode(rawValue: 0x0A)
    public static let phyUpdateComplete = LESubeventCode(rawValue: 0x0C)
    public static let extendedAdvertisingReport = LESubeventCode(rawValue: 0x0D)
}

extension LESubeventCode: CustomStringConvertible {
    public var description: String {
        let names: [UInt8: String] = [
            0x01: "connectionComplete", 0x02: "advertisingReport", 0x03: "connectionUpdateComplete",
            0x04: "readRemoteFeaturesComplete", 0x06: "remoteConnectionParameterRequest",
            0x07: "dataLengthChange", 0x0A: "enhancedConnectionComplete", 0x0C: "phyUpdateComplete",
            0x0D: "extendedAdvertisingReport",
        ]
        return "\(names[rawValue] ?? "subevent") (0x\(String(rawValue, radix: 16)))"
    }
}
