import BluetoothWire

/// The connection parameters a host proposes, shared by LE Create Connection (7.8.12),
/// LE Connection Update (7.8.18) and LE Remote Connection Parameter Request Reply (7.8.31),
/// Core v5.4, Vol 4, Part E.
///
/// Units: intervals 1.25 ms (0x0006...0x0C80), supervision timeout 10 ms (0x000A...0x0C80),
/// CE lengths 0.625 ms; latency counts connection events (0...0x01F3).
public struct LEConnectionParameterRange: Equatable, Hashable, Sendable {
    public var connectionIntervalMin: UInt16
    public var connectionIntervalMax: UInt16
    public var maxLatency: UInt16
    public var supervisionTimeout: UInt16
    public var minCELength: UInt16
    public var maxCELength: UInt16

    public init(connectionIntervalMin: UInt16, connectionIntervalMax: UInt16, maxLatency: UInt16,
                supervisionTimeout: UInt16, minCELength: UInt16 = 0, maxCELength: UInt16 = 0) {
        self.connectionIntervalMin = connectionIntervalMin
        self.connectionIntervalMax = connectionIntervalMax
        self.maxLatency = maxLatency
        self.supervisionTimeout = supervisionTimeout
        self.minCELength = minCELength
        self.maxCELength = maxCELength
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        connectionIntervalMin = try reader.readUInt16()
        connectionIntervalMax = try reader.readUInt16()
        maxLatency = try reader.readUInt16()
        supervisionTimeout = try reader.readUInt16()
        minCELength = try reader.readUInt16()
        maxCELength = try reader.readUInt16()
    }

    public func write(to writer: inout ByteWriter) {
        writer.writeUInt16(connectionIntervalMin)
        writer.writeUInt16(connectionIntervalMax)
        writer.writeUInt16(maxLatency)
        writer.writeUInt16(supervisionTimeout)
        writer.writeUInt16(minCELength)
        writer.writeUInt16(maxCELength)
    }
}
