/// GATT identifiers used by a MetaWear board (protocol reference, section 1).
///
/// Commands are written to ``command`` (write-without-response, except macro commands, see
/// ``MetaWearCommand/requiresWriteWithResponse``); every response and data packet arrives as a
/// notification on ``notify``. UUIDs are given as lowercase strings and as the 16 bytes in
/// big-endian (textual) order; a GATT layer that works in little-endian wire order must reverse them.
public enum MetaWearUUIDs {
    /// MetaWear primary service.
    public static let service = "326a9000-85cb-9195-d9dd-464cfbbae75a"
    /// Command characteristic (write).
    public static let command = "326a9001-85cb-9195-d9dd-464cfbbae75a"
    /// Notify characteristic: enable notifications through its CCCD.
    public static let notify = "326a9006-85cb-9195-d9dd-464cfbbae75a"

    /// Device Information service (Bluetooth SIG, 0x180A).
    public static let deviceInformationService = "0000180a-0000-1000-8000-00805f9b34fb"
    /// Firmware revision string (0x2A26), e.g. `1.7.3`.
    public static let firmwareRevision = "00002a26-0000-1000-8000-00805f9b34fb"
    /// Model number string (0x2A24), e.g. `5` (MetaMotion R/RL) or `8` (MetaMotion S).
    public static let modelNumber = "00002a24-0000-1000-8000-00805f9b34fb"
    /// Hardware revision string (0x2A27).
    public static let hardwareRevision = "00002a27-0000-1000-8000-00805f9b34fb"
    /// Manufacturer name string (0x2A29).
    public static let manufacturerName = "00002a29-0000-1000-8000-00805f9b34fb"
    /// Serial number string (0x2A25).
    public static let serialNumber = "00002a25-0000-1000-8000-00805f9b34fb"

    /// The order in which the SDK reads the Device Information characteristics (section 2, step 3).
    public static let deviceInformationReadOrder: [String] = [
        firmwareRevision, modelNumber, hardwareRevision, manufacturerName, serialNumber,
    ]

    /// The 16 bytes of a UUID string in textual (big-endian) order, or `nil` if it is malformed.
    public static func bytes(of uuid: String) -> [UInt8]? {
        var result: [UInt8] = []
        result.reserveCapacity(16)
        var high: UInt8? = nil
        for scalar in uuid.unicodeScalars {
            if scalar == "-" { continue }
            guard let nibble = hexValue(scalar) else { return nil }
            if let h = high {
                result.append(h << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return result.count == 16 && high == nil ? result : nil
    }

    /// Service UUID bytes, big-endian.
    public static var serviceBytes: [UInt8] { bytes(of: service)! }
    /// Command characteristic UUID bytes, big-endian.
    public static var commandBytes: [UInt8] { bytes(of: command)! }
    /// Notify characteristic UUID bytes, big-endian.
    public static var notifyBytes: [UInt8] { bytes(of: notify)! }

    private static func hexValue(_ scalar: Unicode.Scalar) -> UInt8? {
        switch scalar.value {
        case 0x30...0x39: return UInt8(scalar.value - 0x30)
        case 0x41...0x46: return UInt8(scalar.value - 0x41 + 10)
        case 0x61...0x66: return UInt8(scalar.value - 0x61 + 10)
        default: return nil
        }
    }
}
