import GyroStore
import JSON

/// The JSON shapes shared by the API and the CLI.
public enum AdminJSON {
    public static func session(_ session: SessionRecord) -> JSONValue {
        [
            "id": .string(session.id), "userId": .string(session.userId), "device": .string(session.device),
            "date": .string(session.localDate), "startMs": session.startMs.jsonValue, "endMs": session.endMs.jsonValue,
            "durationSeconds": (session.durationMs / 1000).jsonValue, "samples": session.samples.jsonValue,
            "expected": session.expected.jsonValue, "missing": (session.expected - session.samples).jsonValue, "open": .bool(session.isOpen),
            "chunks": session.chunkCount.jsonValue, "gaps": session.gaps.count.jsonValue,
            "missingByReason": missingByReason(session.gaps).jsonValue, "hazards": session.hazards.jsonValue,
        ]
    }

    /// A sensor's counters beside its human fields (`connection`, `session`); the names are
    /// documented in docs/architecture.md, "Sensor fields of the admin API".
    public static func live(_ live: SensorLive) -> [String: JSONValue] {
        [
            "state": .string(live.state), "samplesReceived": live.samplesReceived.jsonValue, "samplesExpected": live.samplesExpected.jsonValue,
            "gaps": live.gaps.jsonValue, "missingSamples": live.missingSamples.jsonValue, "reconnects": live.reconnects.jsonValue,
            "failedAttempts": live.failedAttempts.jsonValue, "batteryPercent": live.batteryPercent.jsonValue, "boardTime": live.boardTime.jsonValue,
            "logEntries": live.logEntries.jsonValue, "backfilledSamples": live.backfilledSamples.jsonValue, "lastError": live.lastError.jsonValue,
            "fleet": live.fleet.jsonValue,
        ]
    }

    /// Missing samples per gap reason, so that an operator tells samples the sensor never
    /// delivered (`notReceived`, `disconnected (…)`, …) from ones a full store evicted (`storeFull`).
    public static func missingByReason(_ gaps: [GapRange]) -> [String: Int64] {
        gaps.reduce(into: [:]) { $0[$1.reason.rawValue, default: 0] += $1.missing }
    }
}
