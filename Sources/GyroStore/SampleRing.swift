import Logging

/// Where the samples of open chunks are kept between their commit and their chunk's close: a
/// table of same-size slots (`RingSlot`) written in place, in turn.
///
/// Why: a commit that inserts rows allocates pages, so it also rewrites the database header,
/// the table's interior page and an index page, and the new row pages are freed again when the
/// chunk closes: 7 to 9 pages of WAL a second at 4 × 100 Hz. A same-size blob written over an
/// existing row changes its leaf page only, one page of WAL per slot (docs/durability.md,
/// "Writes"). Rewritten slots are copied into the database file once per checkpoint, not once
/// per commit.
///
/// A slot is reused only when none of the chunks it holds samples of is open any more (their
/// documents hold those samples by then); when the next slot is still needed, the ring grows
/// (a rare commit that allocates). The state lives with the writer connection, which alone
/// writes the ring.
struct SampleRing: Sendable {
    static let initialSlots = 64

    private(set) var slotCount: Int
    /// The slot the next commit writes first.
    private(set) var next: Int
    /// The sequence of the last commit that wrote the ring.
    private(set) var sequence: UInt64
    /// The chunks each slot holds samples of (empty: free).
    private var chunks: [[String]]

    /// The ring as the file holds it: its size, its newest sequence, which slots still hold
    /// samples of open chunks. Damaged slots are logged and taken as free.
    static func load(_ db: SQLiteConnection, logger: Logger) throws -> SampleRing {
        var ring = SampleRing(slotCount: 0, next: 0, sequence: 0, chunks: [])
        let open = Set(try db.all("SELECT id FROM chunk WHERE isOpen = 1") { try $0.text(0) })
        var newest: (slot: Int, sequence: UInt64)?
        var held: [Int: [String]] = [:]
        try db.statement("SELECT slot, data FROM sampleRing").forEachRow { row in
            let slot = try row.int(0)
            held[slot] = []
            do {
                if let decoded = try RingSlot.decode(try row.bytes(1)) {
                    if decoded.sequence > (newest?.sequence ?? 0) { newest = (slot, decoded.sequence) }
                    held[slot] = decoded.batches.map(\.chunkId).filter { open.contains($0) }
                }
            } catch {
                logger.error("a slot of the sample ring does not decode; its samples are lost", metadata: [
                    "subsystem": "store", "slot": "\(slot)", "error": "\(error)",
                ])
            }
            return true
        }
        // Slots are numbered 0, 1, 2, …; one missing (removed by hand) is made again.
        let count = (held.keys.max() ?? -1) + 1
        for slot in 0..<count where held[slot] == nil {
            try addSlots(slot..<(slot + 1), in: db)
            held[slot] = []
        }
        ring.chunks = (0..<count).map { held[$0] ?? [] }
        ring.slotCount = ring.chunks.count
        ring.sequence = newest?.sequence ?? 0
        ring.next = ring.slotCount == 0 ? 0 : ((newest?.slot ?? -1) + 1) % ring.slotCount
        return ring
    }

    /// Writes one commit's appends into the next free slots, inside the caller's transaction.
    /// On a thrown error the transaction rolls back and the caller drops this copy of the state.
    mutating func write(_ appends: [SampleAppend], in db: SQLiteConnection) throws {
        let slots = try RingSlot.pack(appends)
        guard !slots.isEmpty else { return }
        sequence += 1
        let update = try db.statement("UPDATE sampleRing SET data = ? WHERE slot = ?")
        for (payload, ids) in slots {
            let slot = try freeSlot(db)
            try update.execute([RingSlot.seal(payload, sequence: sequence), slot])
            chunks[slot] = ids
            next = (slot + 1) % slotCount
        }
    }

    /// The first slot from ``next`` on whose chunks have all closed; a grown ring's first new
    /// slot when there is none.
    private mutating func freeSlot(_ db: SQLiteConnection) throws -> Int {
        let isOpen = try db.statement("SELECT isOpen FROM chunk WHERE id = ?")
        for step in 0..<slotCount {
            let slot = (next + step) % slotCount
            var held = chunks[slot]
            if !held.isEmpty {
                held = try held.filter { id in try isOpen.first([id]) { try $0.int(0) } == 1 }
                chunks[slot] = held
            }
            if held.isEmpty { return slot }
        }
        return try grow(db)
    }

    private mutating func grow(_ db: SQLiteConnection) throws -> Int {
        let first = slotCount
        let added = max(Self.initialSlots, slotCount)
        try Self.addSlots(first..<(first + added), in: db)
        slotCount += added
        chunks += Array(repeating: [], count: added)
        return first
    }

    static func addSlots(_ slots: Range<Int>, in db: SQLiteConnection) throws {
        let insert = try db.statement("INSERT INTO sampleRing (slot, data) VALUES (?, zeroblob(\(RingSlot.size)))")
        for slot in slots { try insert.execute([slot]) }
    }

    /// The samples the ring holds of `chunkId`, in order: the run from its offset 0 up to the
    /// first missing offset (a damaged slot's samples are lost, the ones after them would be
    /// misplaced).
    static func samples(ofChunk chunkId: String, from slots: [[UInt8]], startingAt start: Int) -> (samples: [StoredSample], damaged: Int) {
        var batches: [RingSlot.Batch] = []
        var damaged = 0
        for bytes in slots {
            guard let slot = try? RingSlot.decode(bytes) else {
                if bytes.first ?? 0 != 0 { damaged += 1 }
                continue
            }
            batches += slot.batches.filter { $0.chunkId == chunkId }
        }
        var samples: [StoredSample] = []
        for batch in batches.sorted(by: { $0.offset < $1.offset }) where batch.offset <= start + samples.count {
            let skip = start + samples.count - batch.offset
            samples += batch.samples.dropFirst(skip)
        }
        return (samples, damaged)
    }
}
