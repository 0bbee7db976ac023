import ATT
import BluetoothWire

/// The GATT client of one link.
public actor GATTClient {
    init() {}

    public func exchangeMTU(_ mtu: UInt16) async throws -> UInt16 { 23 }
    public func discoverPrimaryServices() async throws -> [GATTService] { [] }
    public func discoverCharacteristics(of service: GATTService) async throws -> [GATTCharacteristic] { [] }
    public func discoverDescriptors(of characteristic: GATTCharacteristic) async throws -> [GATTDescriptor] { [] }
    public func read(_ characteristic: GATTCharacteristic) async throws -> [UInt8] { [] }
    public func write(_ characteristic: GATTCharacteristic, _ value: [UInt8], withResponse: Bool) async throws {}
    public func subscribe(_ characteristic: GATTCharacteristic, indications: Bool = false) async throws -> AsyncStream<[UInt8]> {
        AsyncStream { $0.finish() }
    }
}
