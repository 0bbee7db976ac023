import XCTest
@testable import Export
import GyroStore

/// One row of each format, byte for byte: MetaBase's header and numbers, the line protocol's
/// escaping, the JSON Lines' keys.
final class RowFormatTests: XCTestCase {
    let context = ExportContext(sessionId: "demo-user___1718625600", userId: "demo-user", device: "C4:BE:84:00:00:01", stream: .gyro,
                                clock: "synchronised", offsetSeconds: 3600, firstMicros: 1_718_625_600_000_125)

    func sample(at micros: Int64, _ x: Int64, _ y: Int64, _ z: Int64, backfilled: Bool = false, missing: Int64 = 0, reasons: String = "") -> ExportSample {
        var point = ChunkBody.Point(StoredSample(timestampMs: 0, x: 0, y: 0, z: 0), backfilled: backfilled)
        point.time = micros
        point.x = x; point.y = y; point.z = z
        return ExportSample(point: point, missingBefore: missing, gapReasons: reasons)
    }

    func render(_ format: ExportFormat, _ context: ExportContext, _ samples: [ExportSample]) -> String {
        var rows = format.rows(context)
        var out: [UInt8] = []
        rows.header(into: &out)
        for sample in samples { rows.row(sample, into: &out) }
        return String(decoding: out, as: UTF8.self)
    }

    func testMetaBaseHeaderNamesTheOffsetAndUnit() {
        XCTAssertEqual(MetaBaseCSV.header(offsetSeconds: -8 * 3600, unit: "deg/s"),
                       "epoch (ms),time (-08:00),elapsed (s),x-axis (deg/s),y-axis (deg/s),z-axis (deg/s)")
        XCTAssertEqual(MetaBaseCSV.header(offsetSeconds: 0, unit: ExportStream.accelerometer.unit),
                       "epoch (ms),time (+00:00),elapsed (s),x-axis (g),y-axis (g),z-axis (g)")
    }

    func testCSVRowsInMetaBasesNumbersThenGyrogatesColumns() {
        let csv = render(.csv, context, [
            sample(at: 1_718_625_600_000_125, 12_195, -103_659, 48_780),
            sample(at: 1_718_625_650_220_125, 24_390, -91_463, Int64.min, backfilled: true, missing: 10, reasons: "notReceived"),
        ])
        XCTAssertEqual(csv, """
            epoch (ms),time (+01:00),elapsed (s),x-axis (deg/s),y-axis (deg/s),z-axis (deg/s),session,clock,backfilled,gap (samples),gap reason
            1718625600000.125,2024-06-17T13:00:00.000,0.000,0.122,-1.037,0.488,demo-user___1718625600,synchronised,false,,
            1718625650220.125,2024-06-17T13:00:50.220,50.220,0.244,-0.915,,demo-user___1718625600,synchronised,true,10,notReceived

            """)
    }

    func testAccelerometerKeepsFiveDecimals() {
        var accel = context
        accel.stream = .accelerometer
        XCTAssertTrue(render(.csv, accel, [sample(at: 1_718_625_600_000_125, 6_104, -100_000, 3)]).contains(",0.06104,-1.00000,0.00003,"))
    }

    func testCSVFieldsWithCommasOrQuotesAreQuoted() {
        var out: [UInt8] = []
        out.append(csvField: "disconnected (a, b)")
        out.append(UInt8(ascii: ","))
        out.append(csvField: "say \"hi\"")
        out.append(UInt8(ascii: ","))
        out.append(csvField: "plain")
        XCTAssertEqual(String(decoding: out, as: UTF8.self), "\"disconnected (a, b)\",\"say \"\"hi\"\"\",plain")
    }

    func testLineProtocolRow() {
        let lines = render(.influx, context, [
            sample(at: 1_718_625_600_000_125, 12_195, -103_659, 48_780),
            sample(at: 1_718_625_650_220_125, 24_390, -91_463, 0, backfilled: true, missing: 10, reasons: "disconnected (controller lost: \"x\")"),
        ])
        XCTAssertEqual(lines, """
            gyro,device=C4:BE:84:00:00:01,user=demo-user,session=demo-user___1718625600,stream=gyro,clock=synchronised x=0.12195,y=-1.03659,z=0.4878 1718625600000125000
            gyro,device=C4:BE:84:00:00:01,user=demo-user,session=demo-user___1718625600,stream=gyro,clock=synchronised x=0.2439,y=-0.91463,z=0,backfilled=true,gap_missing=10,gap_reason="disconnected (controller lost: \\"x\\")" 1718625650220125000

            """)
    }

    func testLineProtocolEscapesTagsAndOmitsMissingAxes() {
        var odd = context
        odd.userId = "a b,c=d"
        odd.sessionId = ""
        let line = render(.influx, odd, [sample(at: 1_000, Int64.min, 5, Int64.min)])
        XCTAssertEqual(line, "gyro,device=C4:BE:84:00:00:01,user=a\\ b\\,c\\=d,stream=gyro,clock=synchronised y=0.00005 1000000\n",
                       "spaces, commas and = escaped; an empty tag left out; a missing axis has no field")
        XCTAssertEqual(render(.influx, odd, [sample(at: 1_000, Int64.min, Int64.min, Int64.min)]), "", "a sample with no axis makes no line")
        var measurement: [UInt8] = []
        measurement.append(measurement: "my gyro,1")
        XCTAssertEqual(String(decoding: measurement, as: UTF8.self), "my\\ gyro\\,1")
    }

    func testJSONLinesRow() {
        var odd = context
        odd.userId = "quote\"d\n"
        let lines = render(.jsonl, odd, [
            sample(at: 1_718_625_650_220_125, 24_390, -91_463, Int64.min, missing: 10, reasons: "notReceived"),
        ])
        XCTAssertEqual(lines, """
            {"session":"demo-user___1718625600","user":"quote\\"d\\n","device":"C4:BE:84:00:00:01","stream":"gyro","clock":"synchronised","timestamp":1718625650220.125,"gx":0.2439,"gy":-0.91463,"gz":null,"backfilled":false,"gap":{"missing":10,"reason":"notReceived"}}

            """)
    }

    func testFormatAndStreamErrorsNameWhatWasWrong() {
        XCTAssertThrowsError(try ExportFormat(parsing: "xml")) { error in
            XCTAssertEqual("\(error)", "the format must be csv, influx or jsonl, not \"xml\"")
        }
        XCTAssertEqual(try ExportFormat(parsing: "INFLUX"), .influx)
        XCTAssertThrowsError(try ExportStream(parsing: "magnetometer")) { error in
            XCTAssertEqual("\(error)", "the stream must be gyro or accelerometer, not \"magnetometer\"")
        }
    }
}
