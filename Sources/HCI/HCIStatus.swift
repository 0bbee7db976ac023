/// An HCI error code, Core v5.4, Vol 1, Part F, 1.3 ("List of Error Codes").
///
/// An open set over the raw octet: codes added by newer specs survive decoding and print as hex.
public struct HCIStatus: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt8

    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    public var isSuccess: Bool { rawValue == 0 }

    public static let success = HCIStatus(rawValue: 0x00)
    public static let unknownHCICommand = HCIStatus(rawValue: 0x01)
    public static let unknownConnectionIdentifier = HCIStatus(rawValue: 0x02)
    public static let hardwareFailure = HCIStatus(rawValue: 0x03)
    public static let pageTimeout = HCIStatus(rawValue: 0x04)
    public static let authenticationFailure = HCIStatus(rawValue: 0x05)
    public static let pinOrKeyMissing = HCIStatus(rawValue: 0x06)
    public static let memoryCapacityExceeded = HCIStatus(rawValue: 0x07)
    public static let connectionTimeout = HCIStatus(rawValue: 0x08)
    public static let connectionLimitExceeded = HCIStatus(rawValue: 0x09)
    public static let connectionAlreadyExists = HCIStatus(rawValue: 0x0B)
    public static let commandDisallowed = HCIStatus(rawValue: 0x0C)
    public static let unsupportedFeatureOrParameterValue = HCIStatus(rawValue: 0x11)
    public static let invalidHCICommandParameters = HCIStatus(rawValue: 0x12)
    public static let remoteUserTerminatedConnection = HCIStatus(rawValue: 0x13)
    public static let remoteDeviceTerminatedLowResources = HCIStatus(rawValue: 0x14)
    public static let remoteDeviceTerminatedPowerOff = HCIStatus(rawValue: 0x15)
    public static let connectionTerminatedByLocalHost = HCIStatus(rawValue: 0x16)
    public static let unsupportedRemoteFeature = HCIStatus(rawValue: 0x1A)
    public static let invalidLLParameters = HCIStatus(rawValue: 0x1E)
    public static let unspecifiedError = HCIStatus(rawValue: 0x1F)
    public static let unsupportedLLParameterValue = HCIStatus(rawValue: 0x20)
    public static let llResponseTimeout = HCIStatus(rawValue: 0x22)
    public static let instantPassed = HCIStatus(rawValue: 0x28)
    public static let controllerBusy = HCIStatus(rawValue: 0x3A)
    public static let unacceptableConnectionParameters = HCIStatus(rawValue: 0x3B)
    public static let advertisingTimeout = HCIStatus(rawValue: 0x3C)
    public static let connectionTerminatedDueToMICFailure = HCIStatus(rawValue: 0x3D)
    public static let connectionFailedToBeEstablished = HCIStatus(rawValue: 0x3E)
    public static let unknownAdvertisingIdentifier = HCIStatus(rawValue: 0x42)
    public static let operationCancelledByHost = HCIStatus(rawValue: 0x44)
}

extension HCIStatus: CustomStringConvertible {
    public var description: String {
        let names: [UInt8: String] = [
            0x00: "success", 0x01: "unknownHCICommand", 0x02: "unknownConnectionIdentifier",
            0x03: "hardwareFailure", 0x04: "pageTimeout", 0x05: "authenticationFailure", 0x06: "pinOrKeyMissing",
            0x07: "memoryCapacityExceeded", 0x08: "connectionTimeout", 0x09: "connectionLimitExceeded",
            0x0B: "connectionAlreadyExists", 0x0C: "commandDisallowed", 0x11: "unsupportedFeatureOrParameterValue",
            0x12: "invalidHCICommandParameters", 0x13: "remoteUserTerminatedConnection",
            0x14: "remoteDeviceTerminatedLowResources", 0x15: "remoteDeviceTerminatedPowerOff",
            0x16: "connectionTerminatedByLocalHost", 0x1A: "unsupportedRemoteFeature", 0x1E: "invalidLLParameters",
            0x1F: "unspecifiedError", 0x20: "unsupportedLLParameterValue", 0x22: "llResponseTimeout",
            0x28: "instantPassed", 0x3A: "controllerBusy", 0x3B: "unacceptableConnectionParameters",
            0x3C: "advertisingTimeout", 0x3D: "connectionTerminatedDueToMICFailure",
            0x3E: "connectionFailedToBeEstablished", 0x42: "unknownAdvertisingIdentifier",
            0x44: "operationCancelledByHost",
        ]
        let hex = "0x" + (rawValue < 0x10 ? "0" : "") + String(rawValue, radix: 16)
        return "\(names[rawValue] ?? "status") (\(hex))"
    }
}
