import BluetoothWire
import GAP

/// One device seen while scanning: the last advertisement (merged with its scan response).
public struct Advertisement: Sendable, Equatable {
    public var address: BluetoothAddress
    public var addressType: BluetoothAddressType
    /// The complete local name, else the shortened one.
    public var name: String?
    public var serviceUUIDs: [BluetoothUUID]
    /// The first Manufacturer Specific Data structure, company identifier included (little endian).
    public var manufacturerData: [UInt8]?
    /// dBm; 127 when the controller could not measure it.
    public var rssi: Int8
    public var isConnectable: Bool

    public init(address: BluetoothAddress, addressType: BluetoothAddressType, name: String? = nil,
                serviceUUIDs: [BluetoothUUID] = [], manufacturerData: [UInt8]? = nil, rssi: Int8, isConnectable: Bool) {
        self.address = address
        self.addressType = addressType
        self.name = name
        self.serviceUUIDs = serviceUUIDs
        self.manufacturerData = manufacturerData
        self.rssi = rssi
        self.isConnectable = isConnectable
    }
}
