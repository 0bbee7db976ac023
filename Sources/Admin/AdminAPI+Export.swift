import Export
import GyroStore
import Logging

extension AdminAPI {
    /// `GET /v1/sessions/{id}/export?format=csv|influx|jsonl[&stream=gyro|accelerometer]`: the
    /// session as `gyrogate export` writes it, streamed. CSV is one stream's file (the gyro's
    /// unless `stream` says), named by `content-disposition`; influx and jsonl carry every
    /// stream unless `stream` says.
    func export(sessionId: String, _ query: [String: String]) async throws -> AdminResponse {
        let format = try ExportFormat(parsing: query["format"] ?? "csv")
        var only = try query["stream"].map { text throws(ExportError) in try ExportStream(parsing: text) }
        if format == .csv && only == nil { only = .gyro }
        let names = Dictionary(configuration.sensors.map { ($0.address.uppercased(), $0.name) }) { first, _ in first }
        let exporter = SessionExporter(store: store, zone: configuration.timeZone, logger: Logger(label: "gyrogate.export"),
                                       boardName: { names[$0.uppercased()] })
        let files = try await exporter.files(sessionId: sessionId, format: format, only: only)
        let name = format == .csv ? files.first?.name ?? "\(sessionId).csv" : "\(sessionId).\(format == .influx ? "lp" : "jsonl")"
        var response = AdminResponse(status: 200, contentType: format.contentType, body: [])
        response.headers["content-disposition"] = "attachment; filename=\"\(name.filter { $0 != "\"" && $0 != "\\" })\""
        response.stream = AdminBodyStream(label: "export \(sessionId) \(format.rawValue)") { body in
            let output = ResponseExportOutput(body: body)
            for file in files { try await exporter.write(file, format: format, to: output) }
        }
        return response
    }
}

/// An export written into a streamed response: one body, whatever the files.
private struct ResponseExportOutput: ExportOutput {
    let body: any AdminBodyOutput

    func begin(file name: String) async throws(ExportError) {}

    func write(_ bytes: [UInt8]) async throws(ExportError) {
        do { try await body.write(bytes) } catch let error as ExportError { throw error } catch {
            throw .output(path: "the HTTP response", reason: "\(error)")
        }
    }

    func end() async throws(ExportError) {}
}
