import BluetoothWire

/// HCI_LE_Set_Random_Address, Core v5.4, Vol 4, Part E, 7.8.4.
public struct LESetRandomAddressCommand: HCICommand {
    public static let opcode = HCIOpcode.leSetRandomAddress
    public var randomAddress: BluetoothAddress

    public init(randomAddress: BluetoothAddress) {
        self.randomAddress = randomAddress
    }

    public init(parameters reader: inout ByteReader) throws(WireError) {
        randomAddress = try BluetoothAddress(from: &reader)
    }

    public func writeParameters(to writer: inout ByteWriter) {
        randomAddress.write(to: &writer)
    }
}
