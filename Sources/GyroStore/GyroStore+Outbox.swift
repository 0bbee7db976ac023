import Foundation
import GRDB

extension GyroStore {
    /// The next unacknowledged publishes after `seq`, oldest first.
    ///
    /// A row whose document has since been rewritten or deleted is superseded by a later row
    /// for the same path, so it is removed here instead of being sent: a subscriber never sees
    /// an older version of a document after a newer one.
    public func pendingOutbox(after seq: Int64, limit: Int) async throws(StoreError) -> [OutboxMessage] {
        do {
            return try await writer.write { db in
                let rows = try Row.fetchAll(db, sql: """
                    SELECT o.seq, o.topic, o.qos, o.retain, o.properties, o.device, o.createdAt, o.payload,
                           o.documentVersion, d.version AS currentVersion, d.body
                    FROM outbox o LEFT JOIN document d ON d.path = o.documentPath
                    WHERE o.seq > ? ORDER BY o.seq LIMIT ?
                    """, arguments: [seq, limit])
                var messages: [OutboxMessage] = []
                var superseded: [Int64] = []
                for row in rows {
                    let seq: Int64 = row["seq"]
                    let payload: [UInt8]
                    if let version: Int64 = row["documentVersion"] {
                        guard let current: Int64 = row["currentVersion"], current == version, let body: Data = row["body"] else {
                            superseded.append(seq)
                            continue
                        }
                        payload = [UInt8](body)
                    } else {
                        payload = (row["payload"] as Data?).map { [UInt8]($0) } ?? []
                    }
                    messages.append(OutboxMessage(seq: seq, topic: row["topic"], qos: row["qos"], retain: row["retain"], payload: payload,
                                                  properties: row["properties"], device: row["device"], createdAt: row["createdAt"]))
                }
                if !superseded.isEmpty { try Self.deleteOutbox(superseded, in: db) }
                return messages
            }
        } catch {
            throw .database(context: "reading the outbox", reason: "\(error)")
        }
    }

    /// The broker acknowledged these rows: they are done.
    public func acknowledge(_ seqs: [Int64]) async throws(StoreError) {
        guard !seqs.isEmpty else { return }
        do { try await writer.write { db in try Self.deleteOutbox(seqs, in: db) } } catch {
            throw .database(context: "removing \(seqs.count) acknowledged outbox rows", reason: "\(error)")
        }
    }

    static func deleteOutbox(_ seqs: [Int64], in db: Database) throws {
        let statement = try db.cachedStatement(sql: "DELETE FROM outbox WHERE seq = ?")
        for seq in seqs { try statement.execute(arguments: [seq]) }
    }

    public func outboxStats() async throws(StoreError) -> OutboxStats {
        try await read("measuring the outbox") { db in
            let row = try Row.fetchOne(db, sql: "SELECT COUNT(*) AS depth, COALESCE(SUM(bytes), 0) AS bytes, MIN(createdAt) AS oldest FROM outbox")
            return OutboxStats(depth: row?["depth"] ?? 0, bytes: row?["bytes"] ?? 0, oldestCreatedAt: row?["oldest"])
        }
    }

    /// Every retained document as it is now, for re-asserting them after a broker lost its
    /// retained store (`seq` is 0: these are not outbox rows).
    public func retainedDocuments() async throws(StoreError) -> [OutboxMessage] {
        try await read("listing retained documents") { db in
            try Row.fetchAll(db, sql: "SELECT path, body, updatedAt FROM document WHERE retained = 1 ORDER BY path").map { row in
                let body: Data = row["body"]
                return OutboxMessage(seq: 0, topic: row["path"], qos: 1, retain: true, payload: [UInt8](body),
                                     properties: nil, device: nil, createdAt: row["updatedAt"])
            }
        }
    }
}
