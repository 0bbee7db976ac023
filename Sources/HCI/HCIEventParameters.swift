import BluetoothWire

/// The parameters of one HCI event (or LE Meta subevent, after its subevent code): one decoder
/// and one encoder, spec field names. Decoders check the layout exactly; a malformed event is
/// the controller's fault and is reported as a `WireError`.
public protocol HCIEventParameters: Sendable, Equatable {
    /// Reads the parameters; the caller checks that nothing is left over.
    init(parameters reader: inout ByteReader) throws(WireError)

    func writeParameters(to writer: inout ByteWriter)
}
