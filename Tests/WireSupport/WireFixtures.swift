import BluetoothWire
import XCTest

/// Hex text to bytes; a malformed literal is a bug in the test itself.
public func hex(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> [UInt8] {
    guard let bytes = Hex.bytes(text) else {
        XCTFail("bad hex literal \(text)", file: file, line: line)
        return []
    }
    return bytes
}

/// Asserts that every strict prefix of `bytes` is rejected with an error (never a trap).
public func assertEveryTruncationThrows(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line,
                                        _ decode: ([UInt8]) throws -> Void) {
    for length in 0..<bytes.count {
        XCTAssertThrowsError(try decode(Array(bytes.prefix(length))), "prefix of \(length) bytes decoded",
                             file: file, line: line)
    }
}
