import BLEHost
import BluetoothWire
import MetaWear

/// The MetaWear GATT layout the tests and the benchmark use.
enum MetaWearGATT {
    static let service = try! BluetoothUUID(parsing: MetaWearUUIDs.service)
    static let command = BluetoothUUID(high: 0x326A_9001_85CB_9195, low: 0xD9DD_464C_FBBA_E75A)
    static let notify = BluetoothUUID(high: 0x326A_9006_85CB_9195, low: 0xD9DD_464C_FBBA_E75A)

    /// Starts the gyro stream: config (low nibble is the ODR code: 25 x 2^(code-6) Hz, so 0x28 is
    /// 100 Hz and 0x2D 3200 Hz), data interrupt, subscribe to data (0x13 0x05), start.
    static func gyroStart(odrConfig: UInt8 = 0x28) -> [[UInt8]] {
        [[0x13, 0x03, odrConfig, 0x00], [0x13, 0x05, 0x01], [0x13, 0x02, 0x01, 0x00], [0x13, 0x01, 0x01]]
    }

    static let gyroStop: [[UInt8]] = [[0x13, 0x01, 0x00], [0x13, 0x02, 0x00, 0x01], [0x13, 0x05, 0x00]]

    struct Handles {
        var command: GATTCharacteristic
        var notify: GATTCharacteristic
    }

    static func discover(_ connection: LEConnection) async throws -> Handles {
        let services = try await connection.gatt.discoverPrimaryServices()
        guard let service = services.first(where: { $0.uuid == MetaWearGATT.service }) else {
            throw BLEHostError.invalidParameter("no MetaWear service among \(services.map(\.uuid))")
        }
        let characteristics = try await connection.gatt.discoverCharacteristics(of: service)
        guard let command = characteristics.first(where: { $0.uuid == MetaWearGATT.command }),
              let notify = characteristics.first(where: { $0.uuid == MetaWearGATT.notify }) else {
            throw BLEHostError.invalidParameter("MetaWear characteristics missing: \(characteristics.map(\.uuid))")
        }
        return Handles(command: command, notify: notify)
    }
}

extension Array where Element == UInt8 {
    /// The sample counter of an unpacked gyro notification `[0x13, 0x05, x, y, z]` (x = int16(n)).
    var gyroSampleX: Int16? {
        guard count == 8, self[0] == 0x13, self[1] == 0x05 else { return nil }
        return Int16(bitPattern: UInt16(self[2]) | UInt16(self[3]) << 8)
    }
}
