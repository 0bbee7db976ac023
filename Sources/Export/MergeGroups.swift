import GyroStore

/// Which sessions `--merge` puts in one table: those of one user on different boards whose
/// spans overlap (each from its start to its end, or to its last sample while open), chained:
/// a session overlapping any of a group joins it. A group holds one session per board; a
/// board's later session that overlaps the group starts the next group.
public enum MergeGroups {
    public static func groups(_ sessions: [SessionRecord]) -> [[SessionRecord]] {
        var groups: [[SessionRecord]] = []
        var open: [String: Int] = [:]   // user → index of its group still collecting
        var ends: [Int: Double] = [:]
        for session in sessions.sorted(by: { $0.startMs < $1.startMs }) {
            let end = session.endMs ?? session.lastSampleMs ?? session.startMs
            if let index = open[session.userId], let groupEnd = ends[index], session.startMs <= groupEnd,
               !groups[index].contains(where: { $0.device.uppercased() == session.device.uppercased() }) {
                groups[index].append(session)
                ends[index] = max(groupEnd, end)
                continue
            }
            groups.append([session])
            open[session.userId] = groups.count - 1
            ends[groups.count - 1] = end
        }
        return groups
    }
}

extension SessionExporter {
    /// A merge group's file, `user_start_merged_sensor.csv`, its first board first; `nil` when
    /// a session of the group is gone.
    public func mergedFile(_ group: [SessionRecord], stream: ExportStream) async throws(ExportError) -> ExportFile {
        var orders: [SessionChunkOrder] = []
        let reader = store.exportReader()
        for session in group {
            let order: SessionChunkOrder?
            do { order = try await reader.chunkOrder(sessionId: session.id) } catch { throw .store(error) }
            guard let order else { throw .unknownSession(session.id) }
            orders.append(order)
        }
        let first = group[0]
        let name = "\(Self.fileSafe(first.userId))_\(startStamp(first))_merged_\(stream.sensorName).csv"
        return ExportFile(name: name, stream: stream, sessions: orders, merged: true)
    }
}
