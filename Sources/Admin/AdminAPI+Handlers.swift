import Capture
import Foundation
import GatewayConfig
import GyroStore

extension AdminAPI {
    func status() async throws -> [String: Any] {
        let outbox = try await store.outboxStats()
        let used = try await store.usedBytes()
        let evicted = try await store.counter(GyroStore.evictedCounter)
        let pruned = try await store.counter(GyroStore.prunedCounter)
        let counters = await engine.counters
        let nowSeconds = Date().timeIntervalSince1970
        var broker: [String: Any] = ["state": "not implemented yet", "host": configuration.mqtt.host, "port": configuration.mqtt.port]
        if let provider = providers.publisherStatus {
            let status = await provider()
            broker["state"] = status.state
            if let detail = status.detail { broker["detail"] = detail }
            if let published = status.publishedTotal { broker["published"] = published }
        }
        var radio: [String: Any] = ["transport": configuration.bluetooth.transport.description, "controller": "not implemented yet"]
        if let provider = providers.bluetoothStatus { radio["controller"] = await provider().controller }
        return [
            "gatewayId": configuration.gatewayId,
            "version": version,
            "uptimeSeconds": (ContinuousClock.now - started).seconds,
            "startedAtMs": startedAtMs,
            "radio": radio,
            "broker": broker,
            "outbox": ["depth": outbox.depth, "bytes": outbox.bytes,
                       "oldestAgeSeconds": outbox.oldestCreatedAt.map { max(0, nowSeconds - $0) as Any } ?? NSNull(),
                       "parked": outbox.parked, "lastParkedReason": outbox.lastParkedReason as Any? ?? NSNull()],
            "store": await storeStatus(used: used, evicted: evicted, pruned: pruned, counters: counters),
            "capture": ["committedSamples": counters.committedSamples, "missingSamples": counters.missingSamples, "gaps": counters.gaps,
                        "duplicateSamples": counters.duplicateSamples, "commits": counters.commits, "failedCommits": counters.failedCommits,
                        "sessionsStarted": counters.sessionsStarted, "sessionsClosed": counters.sessionsClosed],
            "sensors": try await sensors(),
        ]
    }

    /// The store's size and limits, and whether it takes writes (`state` "ok" or "full").
    func storeStatus(used: Int, evicted: Int, pruned: Int, counters: CaptureCounters) async -> [String: Any] {
        var status: [String: Any] = ["usedBytes": used, "maxBytes": store.maxBytes, "workingLimitBytes": store.workingLimit(),
                                     "evictedUnpublishedChunks": evicted, "prunedChunks": pruned,
                                     "notKeptSamples": counters.storeFullSamples, "fullEpisodes": counters.storeFullEpisodes]
        if let space = store.space() { status["diskFreeBytes"] = space.freeBytes }
        switch await engine.storeCondition {
        case .writable:
            status["state"] = "ok"
        case .full(let sinceMs, let reason):
            status["state"] = "full"
            status["fullSinceMs"] = sinceMs
            status["detail"] = reason
        }
        return status
    }

    /// Configured sensors plus any sensor with an open session, with that session's summary.
    func sensors() async throws -> [[String: Any]] {
        let open = await engine.openSessions()
        let ble = await providers.bluetoothStatus?()
        var seen: Set<String> = []
        var result: [[String: Any]] = []
        func entry(address: String, userId: String?, name: String?, configured: Bool) -> [String: Any] {
            var item: [String: Any] = ["address": address, "configured": configured,
                                       "userId": userId.map { $0 as Any } ?? NSNull(), "name": name.map { $0 as Any } ?? NSNull(),
                                       "connection": ble?.sensors[address] ?? "not implemented yet"]
            if let session = open.first(where: { $0.device.uppercased() == address.uppercased() }) {
                item["session"] = AdminJSON.session(session)
            } else {
                item["session"] = NSNull()
            }
            return item
        }
        for sensor in configuration.sensors {
            seen.insert(sensor.address.uppercased())
            result.append(entry(address: sensor.address, userId: sensor.userId, name: sensor.name, configured: true))
        }
        for session in open where !seen.contains(session.device.uppercased()) {
            seen.insert(session.device.uppercased())
            result.append(entry(address: session.device, userId: session.userId, name: nil, configured: false))
        }
        return result
    }

    func sessions(_ query: [String: String]) async throws -> [String: Any] {
        let rangeName = query["range"] ?? "today"
        guard let period = Period(rawValue: rangeName) else { throw AdminError.badRequest("range must be today, week, month or all, not \"\(rangeName)\"") }
        let user = query["user"].flatMap { $0.isEmpty ? nil : $0 }
        let report = try await SessionReport.load(from: store, period: period, userId: user, calendar: calendar)
        return [
            "range": period.rawValue, "count": report.count, "durationSeconds": report.durationMs / 1000, "samples": report.samples,
            "fromMs": report.fromMs.map { $0 as Any } ?? NSNull(), "toMs": report.toMs.map { $0 as Any } ?? NSNull(),
            "sessions": report.sessions.map(AdminJSON.session),
        ]
    }

    func startSession(_ body: [UInt8]) async throws -> AdminResponse {
        let object = try Self.jsonObject(body)
        guard let device = object["device"] as? String, Self.isValidIdentifier(device, maxLength: 64) else {
            throw AdminError.badRequest("\"device\" must be a sensor address (1 to 64 letters, digits, ':', '-', '_', '.')")
        }
        let configured = configuration.sensors.first { $0.address.uppercased() == device.uppercased() }
        guard let userId = (object["userId"] as? String) ?? configured?.userId else {
            throw AdminError.badRequest("\"userId\" is required for a sensor that is not configured")
        }
        guard Self.isValidIdentifier(userId, maxLength: 128) else {
            throw AdminError.badRequest("\"userId\" must be 1 to 128 letters, digits, '-', '_', '.', ':', '@'")
        }
        if await engine.openSessions().contains(where: { $0.device.uppercased() == device.uppercased() }) {
            throw AdminError(409, "conflict", "sensor \(device) already has an open session")
        }
        let record = try await engine.startSession(sensor: SensorIdentity(device: configured?.address ?? device, userId: userId))
        return .json(201, AdminJSON.session(record))
    }

    static func hazards(_ body: [UInt8]) throws -> [String: Int] {
        let object = try jsonObject(body)
        guard !object.isEmpty else { throw AdminError.badRequest("expected at least one {\"name\": intensity}") }
        var hazards: [String: Int] = [:]
        for (name, value) in object {
            guard let number = value as? NSNumber,
                  let intensity = Int(exactly: number.doubleValue), (0...1_000_000).contains(intensity) else {
                throw AdminError.badRequest("hazard \"\(name)\": the intensity must be a whole number from 0 to 1000000")
            }
            hazards[name] = intensity
        }
        return hazards
    }

    func medals(_ query: [String: String]) async throws -> [String: Any] {
        guard let user = query["user"], Self.isValidIdentifier(user, maxLength: 128) else { throw AdminError.badRequest("?user=ID is required") }
        let body = try await store.document(try DocumentPaths.medals(userId: user))
        let earned = (body.flatMap { try? JSONSerialization.jsonObject(with: Data($0)) as? [String: Any] }) ?? [:]
        var medals: [String: Bool] = [:]
        for name in Medals.names { medals[name] = (earned[name] as? Bool) ?? false }
        return ["userId": user, "medals": medals]
    }

    func document(_ path: String) async throws -> AdminResponse {
        if DocumentPath.isCollectionPath(path) {
            return .json(200, ["collection": path, "ids": try await store.documentIds(inCollection: path)])
        }
        let documentPath: DocumentPath
        do { documentPath = try DocumentPath(path) } catch { throw AdminError.badRequest("\(error)") }
        guard let body = try await store.document(documentPath) else { throw AdminError.notFound("no document at \(path)") }
        return AdminResponse(status: 200, body: body)
    }

    static func jsonObject(_ body: [UInt8]) throws -> [String: Any] {
        guard !body.isEmpty else { throw AdminError.badRequest("expected a JSON object body") }
        let parsed: Any
        do { parsed = try JSONSerialization.jsonObject(with: Data(body)) } catch {
            throw AdminError.badRequest("the body is not valid JSON")
        }
        guard let object = parsed as? [String: Any] else { throw AdminError.badRequest("expected a JSON object body") }
        return object
    }

    /// Ids end up in document paths and MQTT topics: no '/', wildcards, spaces or control characters.
    static func isValidIdentifier(_ text: String, maxLength: Int) -> Bool {
        guard !text.isEmpty, text.utf8.count <= maxLength, !text.hasPrefix("$"), text != ".", text != ".." else { return false }
        return text.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.:@".unicodeScalars.contains($0)) }
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
