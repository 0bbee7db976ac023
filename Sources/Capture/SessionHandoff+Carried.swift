import FoundationEssentials
import GyroStore
import JSON

/// The chunks a hand-off carries (`GyroStore.CarriedChunk`): in the document as
/// `"carried": [{"id", "stream", "seq", "odrHz", "range", "firstIndex", "count", "startMs",
/// "endMs", "gaps", "retained", "body"}]`, the stored body in base64 (it is the store's compact
/// form, not text). Absent in a hand-off of a gateway without backfill, or of an older one.
extension SessionHandoff {
    func carriedValue() -> JSONValue {
        .array(carried.map { carried in
            let chunk = carried.chunk
            var object: [String: JSONValue] = [
                "id": .string(chunk.id), "stream": .string(chunk.stream), "seq": .integer(Int64(chunk.seq)),
                "odrHz": .number(chunk.odrHz), "range": .number(chunk.range), "firstIndex": .integer(chunk.firstIndex),
                "count": .integer(Int64(chunk.count)), "retained": .bool(carried.retained),
            ]
            object["startMs"] = chunk.startMs.map(JSONValue.number) ?? .null
            object["endMs"] = chunk.endMs.map(JSONValue.number) ?? .null
            object["gaps"] = (try? JSONValue(parsing: Array(JSONColumn.text(chunk.gaps).utf8))) ?? .array([])
            object["body"] = .string(Data(carried.body).base64EncodedString())
            return .object(object)
        })
    }

    /// The carried chunks of a hand-off's document for `sessionId`; a malformed entry is refused
    /// with what it lacks.
    static func carried(_ value: JSONValue?, sessionId: String, device: String) throws(HandoffError) -> [CarriedChunk] {
        guard let value, value != .null else { return [] }
        guard let items = value.array else { throw .unreadable(device: device, "\"carried\" is not a list") }
        return try items.enumerated().map { (index, item) throws(HandoffError) -> CarriedChunk in
            guard let id = item["id"]?.string, !id.isEmpty, !id.contains(","), let stream = item["stream"]?.string,
                  let seq = item["seq"]?.int, seq >= 0, let odrHz = item["odrHz"]?.double, odrHz > 0,
                  let range = item["range"]?.double, let firstIndex = item["firstIndex"]?.int64, firstIndex >= 0,
                  let count = item["count"]?.int, count >= 0,
                  let encoded = item["body"]?.string, let body = Data(base64Encoded: encoded)
            else {
                throw .unreadable(device: device, "carried chunk \(index) lacks an id, stream, seq, odrHz, range, firstIndex, count or a base64 body")
            }
            var chunk = ChunkRecord(id: id, sessionId: sessionId, stream: stream, seq: seq, odrHz: odrHz, range: range, firstIndex: firstIndex)
            chunk.count = count
            chunk.startMs = item["startMs"]?.double
            chunk.endMs = item["endMs"]?.double
            chunk.isOpen = false
            do {
                chunk.gaps = try JSONColumn.gaps(String(decoding: (item["gaps"] ?? .array([])).encoded(), as: UTF8.self))
            } catch { throw .unreadable(device: device, "carried chunk \(id): \(error)") }
            return CarriedChunk(chunk: chunk, body: Array(body), retained: item["retained"]?.bool ?? false)
        }
    }
}
