// Shared by every fuzz target (compiled into each executable, see Tests/Fuzz/build.sh).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A cursor over the fuzzer's bytes. Past the end it yields zeros and empty slices, so every
/// input is a valid "program" for a harness, and a mutation that shortens the input changes the
/// program smoothly instead of rejecting it.
struct FuzzInput {
    let bytes: [UInt8]
    private(set) var index = 0

    init(_ data: UnsafePointer<UInt8>?, _ size: Int) {
        bytes = size > 0 && data != nil ? Array(UnsafeBufferPointer(start: data, count: size)) : []
    }

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { index >= bytes.count }
    var remainingCount: Int { max(0, bytes.count - index) }

    mutating func byte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func uint16() -> UInt16 { UInt16(byte()) | UInt16(byte()) << 8 }

    mutating func uint64() -> UInt64 {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 64, by: 8) { value |= UInt64(byte()) << UInt64(shift) }
        return value
    }

    /// Up to `count` bytes (fewer at the end), without copying.
    mutating func take(_ count: Int) -> ArraySlice<UInt8> {
        let end = index + min(max(0, count), remainingCount)
        defer { index = end }
        return bytes[min(index, bytes.count)..<end]
    }

    mutating func rest() -> ArraySlice<UInt8> { take(remainingCount) }
}

/// A harness-level property failed: print why and abort, so libFuzzer saves the input.
func fuzzCheck(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
               file: StaticString = #fileID, line: UInt = #line) {
    guard !condition() else { return }
    let text = Array("FUZZ PROPERTY FAILED at \(file):\(line): \(message())\n".utf8)
    _ = text.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    abort()
}

/// `bytes` copied into a larger array at a non-zero offset and sliced back out, so that
/// decoders see slice indices that do not start at 0 (as they do on the data path).
func offsetSlice(_ bytes: some Collection<UInt8>, padding: Int = 3) -> ArraySlice<UInt8> {
    let storage = [UInt8](repeating: 0xEE, count: padding) + Array(bytes) + [0xEE]
    return storage[padding..<(padding + bytes.count)]
}

func hexString(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined(separator: " ")
}
