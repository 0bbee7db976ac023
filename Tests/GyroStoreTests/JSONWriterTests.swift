import XCTest
@testable import GyroStore

/// Numbers as chunk documents write them: fixed point, trailing zeros trimmed, integers exact.
final class JSONWriterTests: XCTestCase {
    private func written(_ body: (inout JSONWriter) -> Void) -> String {
        var writer = JSONWriter()
        writer.beginArray()
        body(&writer)
        writer.endArray()
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    func testNumbersAreFixedPointWithTrailingZerosTrimmed() {
        XCTAssertEqual(written {
            $0.number(0, decimals: 3); $0.number(1.5, decimals: 2); $0.number(-1.25, decimals: 2)
            $0.number(123_456.789, decimals: 3); $0.number(-0.0001, decimals: 2); $0.number(0.061, decimals: 4)
            $0.number(2.0, decimals: 0); $0.number(-0.5, decimals: 0); $0.number(1_795_731_671_000.5, decimals: 1)
            $0.number(0.00000001, decimals: 8); $0.number(-12.30, decimals: 8)
        }, "[0,1.5,-1.25,123456.789,0,0.061,2,-1,1795731671000.5,0.00000001,-12.3]")
    }

    func testIntegersKeepEveryDigit() {
        XCTAssertEqual(written {
            $0.integer(Int64(0)); $0.integer(Int64(7)); $0.integer(Int64(-42)); $0.integer(Int64.max); $0.integer(Int64.min)
        }, "[0,7,-42,9223372036854775807,-9223372036854775808]")
    }

    func testValuesOutsideFixedPointAreNotNumbersTheWriterMadeUp() {
        XCTAssertEqual(written { $0.number(.nan, decimals: 2); $0.number(.infinity, decimals: 2) }, "[null,null]")
        XCTAssertEqual(written { $0.number(1e16, decimals: 0) }, "[\"1e+16\"]")
    }

    /// A run composed on the stack reads as the same pieces appended one by one.
    func testComposedRunsMatchPieceByPiece() {
        let key = Array(#"{"t":"#.utf8), close = Array("}".utf8)
        var composed = JSONWriter()
        composed.appendComposed { run in
            run.raw(key); run.number(1_795_731_671_000.125, decimals: 3); run.raw(close)
            run.raw(Array(",".utf8)); run.raw(key); run.number(-0.000049, decimals: 5); run.raw(close)
            run.raw(Array(",".utf8)); run.raw(key); run.number(.nan, decimals: 5); run.raw([]); run.raw(close)
            run.raw(Array(",".utf8)); run.raw(key); run.number(2e16, decimals: 3); run.raw(close)
        }
        XCTAssertEqual(String(decoding: composed.bytes, as: UTF8.self),
                       #"{"t":1795731671000.125},{"t":-0.00005},{"t":null},{"t":"2e+16"}"#)
    }
}
