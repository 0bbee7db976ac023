import GRDB

extension GyroStore {
    /// Migrations describe the past states of the database: never edit one that has shipped,
    /// add a new one. Written with table and column strings, not app types.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.create(table: "document") { t in
                t.primaryKey("path", .text)
                t.column("collection", .text).notNull().indexed()
                t.column("body", .blob).notNull()
                t.column("version", .integer).notNull()
                t.column("retained", .boolean).notNull()
                t.column("updatedAt", .double).notNull()
            }
            try db.create(table: "outbox") { t in
                t.autoIncrementedPrimaryKey("seq")
                t.column("topic", .text).notNull()
                t.column("qos", .integer).notNull()
                t.column("retain", .boolean).notNull()
                t.column("properties", .text)
                t.column("documentPath", .text).indexed()
                t.column("documentVersion", .integer)
                t.column("payload", .blob)
                t.column("bytes", .integer).notNull()
                t.column("device", .text)
                t.column("createdAt", .double).notNull()
            }
            try db.create(table: "session") { t in
                t.primaryKey("id", .text)
                t.column("userId", .text).notNull().indexed()
                t.column("device", .text).notNull()
                t.column("startMs", .double).notNull().indexed()
                t.column("endMs", .double)
                t.column("lastSampleMs", .double)
                t.column("samples", .integer).notNull()
                t.column("expected", .integer).notNull()
                t.column("hazards", .text).notNull()
                t.column("chunkIds", .text).notNull()
                t.column("accelChunkIds", .text).notNull()
                t.column("gaps", .text).notNull()
                t.column("isOpen", .boolean).notNull()
                t.column("localDate", .text).notNull()
            }
            try db.create(table: "chunk") { t in
                t.primaryKey("id", .text)
                t.belongsTo("session", onDelete: .cascade).notNull()
                t.column("stream", .text).notNull()
                t.column("seq", .integer).notNull()
                t.column("odrHz", .double).notNull()
                t.column("range", .double).notNull()
                t.column("firstIndex", .integer).notNull()
                t.column("count", .integer).notNull()
                t.column("startMs", .double)
                t.column("endMs", .double).indexed()
                t.column("gaps", .text).notNull()
                t.column("isOpen", .boolean).notNull()
                t.column("pruned", .boolean).notNull()
            }
            try db.create(table: "sampleBatch") { t in
                t.column("chunkId", .text).notNull().references("chunk", onDelete: .cascade)
                t.column("offset", .integer).notNull()
                t.column("count", .integer).notNull()
                t.column("data", .blob).notNull()
                t.primaryKey(["chunkId", "offset"])
            }
            try db.create(table: "counter") { t in
                t.primaryKey("name", .text)
                t.column("value", .integer).notNull()
            }
        }
        // Rows the broker keeps refusing (an ACL, a quota) are parked instead of being resent on
        // every connection forever: kept, counted, and retried on request.
        migrator.registerMigration("v2-outbox-parking") { db in
            try db.alter(table: "outbox") { t in
                t.add(column: "refusals", .integer).notNull().defaults(to: 0)
                t.add(column: "parkedAt", .double)
                t.add(column: "parkedReason", .text)
            }
        }
        // Resync lists the retained documents after every new broker session. Without an index
        // that was a scan of the whole document table, whose rows carry the first ~4 KB of each
        // body in their leaf page: 80 MB read for 20,000 chunk documents, at every reconnect.
        // A partial index holds the few retained paths only.
        migrator.registerMigration("v3-retained-documents-index") { db in
            try db.execute(sql: "CREATE INDEX document_retained_path ON document(path) WHERE retained = 1")
        }
        // Delivery checks each outbox row against its document's current version. `version` is
        // stored after `body` in the row, so reading a version above 1 from the table walked the
        // body's whole overflow chain (~35 pages for a chunk) before the body itself was read
        // (0 and 1 live in the record's header). `mqtt-bench` rewrites its documents each round:
        // a fifth of the publisher's CPU. This index answers it from the path alone. Building it
        // reads the same chains once: 1.5 s for 20,000 chunks at version 2 (4.6 s from a cold
        // cache), 0.1 s at version 1, as chunk documents are in the field.
        migrator.registerMigration("v4-document-version-index") { db in
            try db.execute(sql: "CREATE INDEX document_path_version ON document(path, version)")
        }
        // When each power cycle of a board began on the host clock: what places its log entries
        // in time, also for a gateway started after the cycle's clock was read.
        migrator.registerMigration("v5-board-reset-times") { db in
            try db.execute(sql: """
                CREATE TABLE boardResetTime (device TEXT NOT NULL COLLATE NOCASE, resetUID INTEGER NOT NULL, resetTime REAL NOT NULL,
                                             PRIMARY KEY (device, resetUID))
                """)
        }
        return migrator
    }
}
