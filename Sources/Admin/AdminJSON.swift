import Foundation
import GyroStore

/// The JSON shapes shared by the API and the CLI.
public enum AdminJSON {
    public static func session(_ session: SessionRecord) -> [String: Any] {
        [
            "id": session.id, "userId": session.userId, "device": session.device, "date": session.localDate,
            "startMs": session.startMs, "endMs": session.endMs.map { $0 as Any } ?? NSNull(),
            "durationSeconds": session.durationMs / 1000, "samples": session.samples,
            "expected": session.expected, "missing": session.expected - session.samples, "open": session.isOpen,
            "chunks": session.chunkIds.count + session.accelChunkIds.count, "gaps": session.gaps.count,
            "missingByReason": missingByReason(session.gaps), "hazards": session.hazards,
        ]
    }

    /// Missing samples per gap reason, so that an operator tells samples the sensor never
    /// delivered (`notReceived`, `disconnected (…)`, …) from ones a full store evicted (`storeFull`).
    public static func missingByReason(_ gaps: [GapRange]) -> [String: Int64] {
        gaps.reduce(into: [:]) { $0[$1.reason, default: 0] += $1.missing }
    }
}
