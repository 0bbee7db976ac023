extension GyroStore {
    /// Where a board's power cycle began in true time, as last measured while the gateway's
    /// clock was synchronised, and when (epoch s): what dates the board after a restart without
    /// network (its tick counts from that start).
    public struct BoardClockAnchor: Sendable, Equatable {
        public var resetTime: Double
        public var measuredAt: Double

        public init(resetTime: Double, measuredAt: Double) {
            self.resetTime = resetTime
            self.measuredAt = measuredAt
        }
    }

    public func boardClockAnchor(device: String, resetUID: UInt8) async throws(StoreError) -> BoardClockAnchor? {
        try await read("reading the board's clock anchor") { db in
            try db.first("""
                SELECT trueResetTime, trueAt FROM boardResetTime
                WHERE device = ? AND resetUID = ? AND trueResetTime IS NOT NULL AND trueAt IS NOT NULL
                """, [device, Int(resetUID)]) { BoardClockAnchor(resetTime: try $0.double(0), measuredAt: try $0.double(1)) }
        }
    }

    /// Keeps the anchor of a power cycle (the reset time it places logged samples with stays
    /// as it was, or is this one for a cycle not seen before).
    public func saveBoardClockAnchor(device: String, resetUID: UInt8, _ anchor: BoardClockAnchor) async throws(StoreError) {
        do {
            try await write { db in
                try db.run("""
                    INSERT INTO boardResetTime (device, resetUID, resetTime, trueResetTime, trueAt) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT(device, resetUID) DO UPDATE SET trueResetTime = excluded.trueResetTime, trueAt = excluded.trueAt
                    """, [device, Int(resetUID), anchor.resetTime, anchor.resetTime, anchor.measuredAt])
            }
        } catch {
            throw .wrapping(error, context: "saving the board's clock anchor")
        }
    }

    /// The time (epoch ms) of the last sample stored from `device`, in any session.
    public func lastSampleMs(device: String) async throws(StoreError) -> Double? {
        try await read("reading the device's last sample time") { db in
            try db.first("SELECT MAX(COALESCE(lastSampleMs, endMs, startMs)) FROM session WHERE device = ? COLLATE NOCASE",
                         [device]) { try $0.optionalDouble(0) } ?? nil
        }
    }
}
