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
        response.stream = AdminBodyStream(label: "export \(sessionId) \(format.rawValue)") { output in
            for file in files { try await exporter.write(file, format: format, to: output) }
        }
        return response
    }
}
