import GyroStore
import Logging
import ZoneInfo

/// One file of an export: a session's stream (or, merged, several boards' streams).
public struct ExportFile: Sendable {
    /// MetaBase's pattern, `name_start_MAC_sensor.csv` (docs/export.md).
    public var name: String
    public var stream: ExportStream
    /// The sessions it holds: one, or a merge group's, first board first.
    public var sessions: [SessionChunkOrder]
    /// A merge group's table (`MergedTable`) rather than one session's rows.
    public var merged: Bool = false
}

/// Writes sessions out of the store as CSV, line protocol or JSON Lines, streamed: rows are
/// written as the chunks are read, one chunk at a time, so that memory stays flat whatever the
/// session's length (docs/benchmarks.md, "Export").
public struct SessionExporter: Sendable {
    public let store: GyroStore
    public let zone: Zone
    /// The board's name for file names (the configuration's `sensors[].name`); `MetaWear`
    /// when it names none, as MetaBase's default.
    public let boardName: @Sendable (String) -> String?
    let logger: Logger
    /// Bytes gathered before a write to the output.
    static let flushBytes = 64 * 1024

    public init(store: GyroStore, zone: Zone, logger: Logger, boardName: @escaping @Sendable (String) -> String? = { _ in nil }) {
        self.store = store
        self.zone = zone
        self.logger = logger
        self.boardName = boardName
    }

    /// The files a session makes: one a stream that has chunks (`only`: that stream alone).
    public func files(sessionId: String, format: ExportFormat, only: ExportStream? = nil) async throws(ExportError) -> [ExportFile] {
        let order: SessionChunkOrder?
        do { order = try await store.exportReader().chunkOrder(sessionId: sessionId) } catch { throw .store(error) }
        guard let order else { throw .unknownSession(sessionId) }
        return ExportStream.allCases.filter { only == nil || $0 == only }
            .filter { !order.chunkIds(stream: $0.rawValue).isEmpty || (only != nil && $0 == .gyro) }
            .map { ExportFile(name: fileName(order.session, stream: $0, format: format), stream: $0, sessions: [order]) }
    }

    /// `name_start_MAC_sensor.ext`: the board's name (letters, digits, `-`), the session's
    /// start in local time (`2024-06-17T12.00.00.000`), the address without colons, and
    /// MetaBase's sensor word (`Gyroscope`, `Accelerometer`).
    func fileName(_ session: SessionRecord, stream: ExportStream, format: ExportFormat) -> String {
        let name = Self.fileSafe(boardName(session.device) ?? "MetaWear")
        let mac = session.device.uppercased().filter { $0 != ":" && $0 != "-" }
        return "\(name)_\(startStamp(session))_\(Self.fileSafe(mac))_\(stream.sensorName).\(format.fileExtension)"
    }

    func startStamp(_ session: SessionRecord) -> String {
        let micros = Int64((session.startMs * 1000).rounded())
        return LocalTime(offsetSeconds: offset(atMs: session.startMs)).fileStamp(micros: micros)
    }

    func offset(atMs ms: Double) -> Int { zone.offset(atEpochSeconds: Int((ms / 1000).rounded(.down))) }

    /// Letters, digits and `-` of `text` (`MetaMotion R (emulated)` → `MetaMotion-R-emulated`).
    static func fileSafe(_ text: String) -> String {
        var result = ""
        for character in text {
            if character.isASCII && (character.isLetter || character.isNumber) {
                result.append(character)
            } else if !result.isEmpty && result.last != "-" {
                result.append("-")
            }
        }
        while result.last == "-" { result.removeLast() }
        return result.isEmpty ? "MetaWear" : result
    }

    /// Writes one file: a session's stream, or a merge group's table.
    public func write(_ file: ExportFile, format: ExportFormat, to output: any ExportOutput) async throws(ExportError) {
        try await output.begin(file: file.name)
        if !file.merged {
            try await writeSession(file.sessions[0], stream: file.stream, format: format, to: output)
        } else {
            var table = MergedTable(reader: store.exportReader(), sessions: file.sessions, stream: file.stream, offsetSeconds: offset(atMs: file.sessions[0].session.startMs))
            try await table.write(to: output)
            logger.debug("exported a merged table", metadata: [
                "subsystem": "export", "file": "\(file.name)", "boards": "\(file.sessions.count)", "droppedSamples": "\(table.droppedSamples)",
            ])
        }
        try await output.end()
    }

    func writeSession(_ order: SessionChunkOrder, stream: ExportStream, format: ExportFormat, to output: any ExportOutput) async throws(ExportError) {
        let session = order.session
        var cursor = SampleCursor(reader: store.exportReader(), chunkIds: order.chunkIds(stream: stream.rawValue),
                                  gaps: session.gaps.filter { $0.stream == stream.rawValue })
        let first = try await cursor.peekTime() ?? Int64((session.startMs * 1000).rounded())
        var rows = format.rows(ExportContext(session: session, stream: stream, offsetSeconds: offset(atMs: session.startMs), firstMicros: first))
        var buffer: [UInt8] = []
        buffer.reserveCapacity(Self.flushBytes + 512)
        rows.header(into: &buffer)
        var count = 0
        while let sample = try await cursor.next() {
            rows.row(sample, into: &buffer)
            count += 1
            if buffer.count >= Self.flushBytes {
                try await output.write(buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }
        if !buffer.isEmpty { try await output.write(buffer) }
        logger.debug("exported a session stream", metadata: [
            "subsystem": "export", "session": "\(session.id)", "stream": "\(stream.rawValue)", "format": "\(format.rawValue)",
            "samples": "\(count)", "gapsAfterLastSample": "\(cursor.trailingGaps.count)",
        ])
    }
}
