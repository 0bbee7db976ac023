/// How far an open session has come: the columns of its row that change with every commit
/// that adds samples.
///
/// Why apart from ``SessionRecord``: the full row carries the session's chunk list (thousands
/// of ids by the end of a long session), its gaps and its indexed columns. Rewriting it at every
/// commit cost pages of WAL per second that grew with the session; this touches three numbers.
public struct SessionProgress: Sendable, Equatable {
    public var sessionId: String
    public var lastSampleMs: Double?
    public var samples: Int64
    public var expected: Int64

    public init(_ session: SessionRecord) {
        sessionId = session.id
        lastSampleMs = session.lastSampleMs
        samples = session.samples
        expected = session.expected
    }

    /// Updates the session's row, which an earlier commit (or this one, before) wrote in full.
    func update(_ db: SQLiteConnection) throws {
        try db.run("UPDATE session SET lastSampleMs = ?, samples = ?, expected = ? WHERE id = ?",
                   [lastSampleMs, samples, expected, sessionId])
    }
}
