import BluetoothWire

/// L2CAP_CONNECTION_PARAMETER_UPDATE_REQ (code 0x12), Core v5.4, Vol 3, Part A, 4.20: a
/// peripheral asks the central for new connection parameters. A real MetaWear sends one after
/// connecting; check it with ``ConnectionParameterUpdateRequest/validate()`` before applying it.
public struct ConnectionParameterUpdateRequest: Equatable, Sendable {
    public var identifier: UInt8
    /// Units of 1.25 ms, 6...3200.
    public var intervalMin: UInt16
    public var intervalMax: UInt16
    /// Connection events the peripheral may skip, 0...499.
    public var latency: UInt16
    /// Supervision timeout in units of 10 ms, 10...3200.
    public var timeout: UInt16

    public init(identifier: UInt8, intervalMin: UInt16, intervalMax: UInt16, latency: UInt16, timeout: UInt16) {
        self.identifier = identifier
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.latency = latency
        self.timeout = timeout
    }

    init(identifier: UInt8, data reader: inout ByteReader) throws(WireError) {
        self.identifier = identifier
        intervalMin = try reader.readUInt16()
        intervalMax = try reader.readUInt16()
        latency = try reader.readUInt16()
        timeout = try reader.readUInt16()
    }

    func writeData(to writer: inout ByteWriter) {
        writer.writeUInt16(intervalMin)
        writer.writeUInt16(intervalMax)
        writer.writeUInt16(latency)
        writer.writeUInt16(timeout)
    }
}
