extension GyroStore {
    /// Migrations describe the past states of the database: never edit one that has shipped,
    /// add a new one. The SQL of v1 and v2 is, to the character, what GRDB's schema builder
    /// generated for them when they shipped, so new stores and upgraded ones have one schema.
    static var migrator: SchemaMigrator {
        var migrator = SchemaMigrator()
        migrator.register("v1") { db in
            try db.execute("""
                CREATE TABLE "document" ("path" TEXT PRIMARY KEY NOT NULL, "collection" TEXT NOT NULL, "body" BLOB NOT NULL, \
                "version" INTEGER NOT NULL, "retained" BOOLEAN NOT NULL, "updatedAt" DOUBLE NOT NULL);
                CREATE INDEX "document_on_collection" ON "document"("collection");
                CREATE TABLE "outbox" ("seq" INTEGER PRIMARY KEY AUTOINCREMENT, "topic" TEXT NOT NULL, "qos" INTEGER NOT NULL, \
                "retain" BOOLEAN NOT NULL, "properties" TEXT, "documentPath" TEXT, "documentVersion" INTEGER, "payload" BLOB, \
                "bytes" INTEGER NOT NULL, "device" TEXT, "createdAt" DOUBLE NOT NULL);
                CREATE INDEX "outbox_on_documentPath" ON "outbox"("documentPath");
                CREATE TABLE "session" ("id" TEXT PRIMARY KEY NOT NULL, "userId" TEXT NOT NULL, "device" TEXT NOT NULL, \
                "startMs" DOUBLE NOT NULL, "endMs" DOUBLE, "lastSampleMs" DOUBLE, "samples" INTEGER NOT NULL, \
                "expected" INTEGER NOT NULL, "hazards" TEXT NOT NULL, "chunkIds" TEXT NOT NULL, "accelChunkIds" TEXT NOT NULL, \
                "gaps" TEXT NOT NULL, "isOpen" BOOLEAN NOT NULL, "localDate" TEXT NOT NULL);
                CREATE INDEX "session_on_userId" ON "session"("userId");
                CREATE INDEX "session_on_startMs" ON "session"("startMs");
                CREATE TABLE "chunk" ("id" TEXT PRIMARY KEY NOT NULL, \
                "sessionId" TEXT NOT NULL REFERENCES "session"("id") ON DELETE CASCADE, "stream" TEXT NOT NULL, \
                "seq" INTEGER NOT NULL, "odrHz" DOUBLE NOT NULL, "range" DOUBLE NOT NULL, "firstIndex" INTEGER NOT NULL, \
                "count" INTEGER NOT NULL, "startMs" DOUBLE, "endMs" DOUBLE, "gaps" TEXT NOT NULL, "isOpen" BOOLEAN NOT NULL, \
                "pruned" BOOLEAN NOT NULL);
                CREATE INDEX "chunk_on_sessionId" ON "chunk"("sessionId");
                CREATE INDEX "chunk_on_endMs" ON "chunk"("endMs");
                CREATE TABLE "sampleBatch" ("chunkId" TEXT NOT NULL REFERENCES "chunk"("id") ON DELETE CASCADE, \
                "offset" INTEGER NOT NULL, "count" INTEGER NOT NULL, "data" BLOB NOT NULL, PRIMARY KEY ("chunkId", "offset"));
                CREATE TABLE "counter" ("name" TEXT PRIMARY KEY NOT NULL, "value" INTEGER NOT NULL);
                """)
        }
        // Rows the broker keeps refusing (an ACL, a quota) are parked instead of being resent on
        // every connection forever: kept, counted, and retried on request.
        migrator.register("v2-outbox-parking") { db in
            try db.execute("""
                ALTER TABLE "outbox" ADD COLUMN "refusals" INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE "outbox" ADD COLUMN "parkedAt" DOUBLE;
                ALTER TABLE "outbox" ADD COLUMN "parkedReason" TEXT;
                """)
        }
        // Resync lists the retained documents after every new broker session. Without an index
        // that was a scan of the whole document table, whose rows carry the first ~4 KB of each
        // body in their leaf page: tens of MB read at every reconnect (docs/benchmarks.md).
        // A partial index holds the few retained paths only.
        migrator.register("v3-retained-documents-index") { db in
            try db.execute("CREATE INDEX document_retained_path ON document(path) WHERE retained = 1")
        }
        // Delivery checks each outbox row against its document's current version. `version` is
        // stored after `body` in the row, so reading a version above 1 from the table walked the
        // body's whole overflow chain (~35 pages for a chunk) before the body itself was read
        // (0 and 1 live in the record's header), a large part of the publisher's CPU where
        // documents are rewritten. This index answers it from the path alone. Building it reads
        // the same chains once, and little for documents at version 1, as chunk documents are in
        // the field (docs/benchmarks.md).
        migrator.register("v4-document-version-index") { db in
            try db.execute("CREATE INDEX document_path_version ON document(path, version)")
        }
        // When each power cycle of a board began on the host clock: what places its log entries
        // in time, also for a gateway started after the cycle's clock was read.
        migrator.register("v5-board-reset-times") { db in
            try db.execute("""
                CREATE TABLE boardResetTime (device TEXT NOT NULL COLLATE NOCASE, resetUID INTEGER NOT NULL, resetTime REAL NOT NULL,
                                             PRIMARY KEY (device, resetUID))
                """)
        }
        // The samples of open chunks, in same-size slots written in place (SampleRing). Rows of
        // `sampleBatch` from older gateways are still read, and deleted as their chunks close.
        migrator.register("v6-sample-ring") { db in
            try db.execute("CREATE TABLE sampleRing (slot INTEGER PRIMARY KEY, data BLOB NOT NULL)")
            try SampleRing.addSlots(0..<SampleRing.initialSlots, in: db)
        }
        // How a session's times were dated (HostTime's `Dating`; NULL: by a gateway that did not
        // say), and each board power cycle's start as last measured while the gateway's clock was
        // synchronised: what dates a board after a restart without network.
        migrator.register("v7-dating") { db in
            try db.execute("""
                ALTER TABLE session ADD COLUMN dating TEXT;
                ALTER TABLE boardResetTime ADD COLUMN trueResetTime REAL;
                ALTER TABLE boardResetTime ADD COLUMN trueAt REAL;
                """)
        }
        // What the store reads at every start, found through indexes of the few rows it wants:
        // the open sessions (recovery) and the open chunks (recovery, the sample ring's load)
        // were scans of every session and chunk row ever written, months of them, which made
        // the start grow with the store's history (docs/durability.md, "Corruption"). And the
        // chunks retention may still remove: its oldest-first walk stepped over every chunk it
        // had pruned before, a pass's cost growing with the store's age. Partial indexes: a few
        // entries each, one page written when a session or chunk opens or closes.
        migrator.register("v8-open-and-unpruned-indexes") { db in
            try db.execute("CREATE INDEX session_open ON session(startMs) WHERE isOpen = 1")
            try db.execute("CREATE INDEX chunk_open ON chunk(sessionId, stream, seq) WHERE isOpen = 1")
            try db.execute("CREATE INDEX chunk_unpruned_by_end ON chunk(endMs) WHERE isOpen = 0 AND pruned = 0")
        }
        // A session's chunk lists come from the chunk table (SessionRecord+Rows says why): the
        // row keeps their count. A chunk retention evicted unpublished was marked pruned and left
        // out of its session's lists; now such a chunk is deleted, so that every closed chunk of
        // a session is listed. The lists' text in old rows is cleared (one rewrite of the table).
        migrator.register("v9-chunk-lists-from-chunks") { db in
            try db.execute("""
                DELETE FROM chunk WHERE isOpen = 0 AND pruned = 1 AND NOT EXISTS (
                    SELECT 1 FROM session s WHERE s.id = chunk.sessionId
                    AND instr(',' || s.chunkIds || ',' || s.accelChunkIds || ',', ',' || chunk.id || ',') > 0);
                ALTER TABLE session ADD COLUMN chunks INTEGER NOT NULL DEFAULT 0;
                UPDATE session SET chunks = (SELECT count(*) FROM chunk c WHERE c.sessionId = session.id AND c.isOpen = 0),
                    chunkIds = '', accelChunkIds = '';
                """)
        }
        // The chunks a session had before this gateway adopted it from another gateway of a
        // fleet (their documents were published there): written once, at the adoption, and
        // listed before the session's own chunks (SessionRecord+Rows). A table of its own, so
        // that the session's row, rewritten at every chunk close, stays small.
        migrator.register("v10-inherited-chunks") { db in
            try db.execute("""
                CREATE TABLE sessionInherited (sessionId TEXT PRIMARY KEY REFERENCES session(id) ON DELETE CASCADE,
                                               gyro TEXT NOT NULL, accel TEXT NOT NULL)
                """)
        }
        return migrator
    }
}
