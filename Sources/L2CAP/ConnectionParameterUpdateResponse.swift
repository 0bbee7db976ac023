import BluetoothWire

/// L2CAP_CONNECTION_PARAMETER_UPDATE_RSP (code 0x13), Core v5.4, Vol 3, Part A, 4.21.
public struct ConnectionParameterUpdateResponse: Equatable, Sendable {
    /// The identifier of the request being answered.
    public var identifier: UInt8
    public var result: Result

    public init(identifier: UInt8, result: Result) {
        self.identifier = identifier
        self.result = result
    }

    init(identifier: UInt8, data reader: inout ByteReader) throws(WireError) {
        self.identifier = identifier
        result = Result(rawValue: try reader.readUInt16())
    }

    func writeData(to writer: inout ByteWriter) {
        writer.writeUInt16(result.rawValue)
    }

    /// An open set over the 16-bit result.
    public struct Result: RawRepresentable, Hashable, Sendable {
        public let rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }
        public static let accepted = Result(rawValue: 0x0000)
        public static let rejected = Result(rawValue: 0x0001)
    }
}
