// Fuzz target "att": ATTPDU(decoding:) on the whole input, and the encode round trip.
//
// Property (the one Tests/ATTTests and Tests/BLEFuzzTests assert): a PDU that decodes
// re-encodes to bytes that decode to the same PDU. Byte equality with the input is NOT a property
// of this codec (a 128-bit UUID that has a 16-bit form is re-encoded in 2 octets), but the encoding
// must be canonical: encoding the re-decoded PDU gives the same bytes again. The opcode octet
// survives, and the PDU's opcode is the input's first octet.

import ATT
import BluetoothWire

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzATT(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = FuzzInput(data, size).bytes
    check(input[...])
    check(offsetSlice(input))
    return 0
}

private func check(_ bytes: ArraySlice<UInt8>) {
    let pdu: ATTPDU
    do { pdu = try ATTPDU(decoding: bytes) } catch {
        _ = error.description
        return
    }
    fuzzCheck(pdu.opcode.rawValue == bytes.first, "opcode \(pdu.opcode) for input \(hexString(bytes))")
    _ = pdu.opcode.description
    _ = (pdu.opcode.isCommand, pdu.opcode.hasAuthenticationSignature)
    if case let .errorResponse(error) = pdu { _ = error.errorCode.description }
    let encoded = pdu.encode()
    fuzzCheck(encoded.first == bytes.first, "re-encoding changed the opcode: \(hexString(bytes)) -> \(hexString(encoded))")
    let again: ATTPDU
    do { again = try ATTPDU(decoding: encoded) } catch {
        fuzzCheck(false, "re-encoded PDU does not decode (\(error)): \(hexString(bytes)) -> \(hexString(encoded))")
        return
    }
    fuzzCheck(again == pdu, "decode(encode(pdu)) != pdu: \(hexString(bytes)) -> \(hexString(encoded))")
    fuzzCheck(again.encode() == encoded, "encoding is not canonical: \(hexString(encoded)) -> \(hexString(again.encode()))")
}
