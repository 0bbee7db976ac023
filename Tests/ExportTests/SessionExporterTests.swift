import Capture
import Logging
import XCTest
@testable import Export
import GyroStore
import ZoneInfo

/// Sessions captured through the engine into an in-memory store, exported: chunks in order,
/// the open chunk's samples after the closed ones, MetaBase's file names, the merged table.
final class SessionExporterTests: XCTestCase {
    actor Collected: ExportOutput {
        var files: [String: [UInt8]] = [:]
        var order: [String] = []
        private var current = ""

        func begin(file name: String) { current = name; order.append(name); files[name] = [] }
        func write(_ bytes: [UInt8]) { files[current, default: []] += bytes }
        func end() {}
        func text(_ name: String) -> String { String(decoding: files[name] ?? [], as: UTF8.self) }
    }

    let logger = Logger(label: "export-tests")

    func capture(_ store: GyroStore, device: String, startMs: Double, count: Int, stop: Bool, gapAfter: Int? = nil) async throws -> SessionRecord {
        let engine = CaptureEngine(store: store, rules: CaptureRules(chunkSize: 100, commitInterval: .milliseconds(20)),
                                   calendar: PeriodCalendar(timeZone: .utc), logger: logger)
        let sensor = SensorIdentity(device: device, userId: "u")
        let session = try await engine.startSession(sensor: sensor, atMs: startMs)
        var index: Int64 = 0
        var samples: [StoredSample] = []
        for i in 0..<count {
            if i == gapAfter { index += 5 }
            samples.append(StoredSample(timestampMs: startMs + Double(index) * 20, x: Float(i) / 16.4, y: 0, z: -Float(i) / 16.4))
            index += 1
        }
        // One append a run of consecutive indices: the jump is a gap the engine records.
        let split = gapAfter ?? count
        try await engine.append(sensor: sensor, stream: .gyro, odrHz: 50, range: 2000, firstIndex: 0, samples: Array(samples[..<split]))
        if split < count {
            try await engine.append(sensor: sensor, stream: .gyro, odrHz: 50, range: 2000, firstIndex: Int64(split) + 5,
                                    samples: Array(samples[split...]))
        }
        try await engine.flush()
        guard stop else { return try await store.session(id: session.id)! }
        let closed = try await engine.stopSession(id: session.id)
        try await engine.flush()
        return closed
    }

    func testRowsComeInOrderWithTheOpenChunksLastAndTheGapOnItsRow() async throws {
        let store = try GyroStore.inMemory(logger: logger)
        let session = try await capture(store, device: "C4:BE:84:00:00:01", startMs: 1_718_625_600_000, count: 250, stop: false, gapAfter: 120)
        let exporter = SessionExporter(store: store, zone: try Zone.named("Europe/London"), logger: logger) { _ in "MetaMotion R (emulated)" }
        let files = try await exporter.files(sessionId: session.id, format: .csv)
        XCTAssertEqual(files.map(\.name), ["MetaMotion-R-emulated_2024-06-17T13.00.00.000_C4BE84000001_Gyroscope.csv"])
        let output = Collected()
        try await exporter.write(files[0], format: .csv, to: output)
        let lines = await output.text(files[0].name).split(separator: "\n")
        XCTAssertEqual(lines.count, 251, "a header and one row a sample, the open chunk's 50 included")
        XCTAssertTrue(lines[0].hasPrefix("epoch (ms),time (+01:00),elapsed (s),x-axis (deg/s)"))
        let epochs = lines.dropFirst().map { Double($0.split(separator: ",", omittingEmptySubsequences: false)[0])! }
        XCTAssertEqual(epochs, epochs.sorted(), "in time order")
        let withGap = lines.dropFirst().filter { $0.hasSuffix(",5,notReceived") }
        XCTAssertEqual(withGap.count, 1, "the gap's 5 samples on the row after it: \(withGap)")
        XCTAssertTrue(withGap.first?.hasPrefix("1718625602500.000,") == true, "the 121st sample, at index 125: \(withGap)")
    }

    func testAnUnknownSessionIsNamed() async throws {
        let exporter = SessionExporter(store: try GyroStore.inMemory(logger: logger), zone: .utc, logger: logger)
        do {
            _ = try await exporter.files(sessionId: "nobody___1", format: .csv)
            XCTFail("no error")
        } catch {
            XCTAssertTrue("\(error)".contains("\"nobody___1\""))
        }
    }

    func testMergedTableHasEachBoardOnItsColumnsAndGapsEmpty() async throws {
        let store = try GyroStore.inMemory(logger: logger)
        let a = try await capture(store, device: "C4:BE:84:00:00:01", startMs: 1_718_625_600_000, count: 100, stop: true)
        let b = try await capture(store, device: "C4:BE:84:00:00:02", startMs: 1_718_625_600_507, count: 100, stop: true, gapAfter: 50)
        let groups = MergeGroups.groups([b, a])
        XCTAssertEqual(groups.map { $0.map(\.device) }, [["C4:BE:84:00:00:01", "C4:BE:84:00:00:02"]])
        let exporter = SessionExporter(store: store, zone: .utc, logger: logger)
        let file = try await exporter.mergedFile(groups[0], stream: .gyro)
        XCTAssertEqual(file.name, "u_2024-06-17T12.00.00.000_merged_Gyroscope.csv")
        let output = Collected()
        try await exporter.write(file, format: .csv, to: output)
        let lines = await output.text(file.name).split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        XCTAssertEqual(lines.first, "epoch (ms),time (+00:00),elapsed (s),C4BE84000001 epoch (ms),C4BE84000001 x-axis (deg/s),"
                       + "C4BE84000001 y-axis (deg/s),C4BE84000001 z-axis (deg/s),C4BE84000002 epoch (ms),C4BE84000002 x-axis (deg/s),"
                       + "C4BE84000002 y-axis (deg/s),C4BE84000002 z-axis (deg/s)")
        let cells = lines.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        XCTAssertEqual(cells.filter { !$0[3].isEmpty }.count, 100)
        XCTAssertEqual(cells.filter { !$0[7].isEmpty }.count, 100)
        for row in cells where !row[3].isEmpty && !row[7].isEmpty {
            XCTAssertLessThan(abs(Double(row[3])! - Double(row[7])!), 20, "one period at 50 Hz: \(row)")
        }
        XCTAssertTrue(cells.contains { !$0[3].isEmpty && $0[7].isEmpty }, "board 2's gap and late start as empty cells")
    }

    func testFileNamesKeepLettersDigitsAndDashes() {
        XCTAssertEqual(SessionExporter.fileSafe("MetaMotion R (emulated)"), "MetaMotion-R-emulated")
        XCTAssertEqual(SessionExporter.fileSafe("../../etc"), "etc")
        XCTAssertEqual(SessionExporter.fileSafe("///"), "MetaWear")
    }
}
