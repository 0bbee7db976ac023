import Capture
import FoundationEssentials
import GatewayConfig
import GyroStore
import JSON

extension AdminAPI {
    func status() async throws -> JSONValue {
        let outbox = try await store.outboxStats()
        let used = try await store.usedBytes()
        let evicted = try await store.counter(GyroStore.evictedCounter)
        let pruned = try await store.counter(GyroStore.prunedCounter)
        let counters = await engine.counters
        let commitInterval = configuration.capture.commitInterval(sensors: configuration.sensors)
        let nowSeconds = Date().timeIntervalSince1970
        var broker: [String: JSONValue] = ["state": "not implemented yet", "host": .string(configuration.mqtt.host),
                                           "port": configuration.mqtt.port.jsonValue]
        if let provider = providers.publisherStatus {
            let status = await provider()
            broker["state"] = .string(status.state)
            if let detail = status.detail { broker["detail"] = .string(detail) }
            if let published = status.publishedTotal { broker["published"] = published.jsonValue }
            if let current = status.broker { broker["connectedTo"] = .string(current) }
            broker["failovers"] = status.failovers.jsonValue
        }
        if !configuration.mqtt.fallbackBrokers.isEmpty {
            broker["hosts"] = .array(configuration.mqtt.brokers.map { .string($0.description) })
        }
        var radio: [String: JSONValue] = ["transport": .string(configuration.bluetooth.transport.description), "controller": "not implemented yet"]
        if let provider = providers.bluetoothStatus { radio["controller"] = .string(await provider().controller) }
        var status: JSONValue = [
            "gatewayId": .string(configuration.gatewayId),
            "version": .string(version),
            "uptimeSeconds": .number((ContinuousClock.now - started).seconds),
            "startedAtMs": .number(startedAtMs),
            "radio": .object(radio),
            "broker": .object(broker),
            "outbox": ["depth": outbox.depth.jsonValue, "bytes": outbox.bytes.jsonValue,
                       "oldestAgeSeconds": outbox.oldestCreatedAt.map { max(0, nowSeconds - $0) }.jsonValue,
                       "parked": outbox.parked.jsonValue, "lastParkedReason": outbox.lastParkedReason.jsonValue],
            "store": .object(await storeStatus(used: used, evicted: evicted, pruned: pruned, counters: counters)),
            "capture": ["committedSamples": counters.committedSamples.jsonValue, "missingSamples": counters.missingSamples.jsonValue,
                        "gaps": counters.gaps.jsonValue, "duplicateSamples": counters.duplicateSamples.jsonValue,
                        "commits": counters.commits.jsonValue, "failedCommits": counters.failedCommits.jsonValue,
                        "sessionsStarted": counters.sessionsStarted.jsonValue, "sessionsClosed": counters.sessionsClosed.jsonValue,
                        "commitIntervalMs": commitInterval.ms.jsonValue, "commitIntervalSetting": .string(commitInterval.reason)],
            "sensors": .array(try await sensors()),
            "clock": await clockStatus(),
        ]
        if let provider = providers.fleetStatus, case .object(var object) = status {
            object["fleet"] = await provider()
            status = .object(object)
        }
        return status
    }

    /// The store's size and limits, and whether it takes writes: `state` "ok", "full" (the disk
    /// has no room: a commit failed, or retention evicts unpublished data for want of disk) or
    /// "atLimit" (retention evicts unpublished data to stay under `retention.maxStoreBytes`).
    func storeStatus(used: Int, evicted: Int, pruned: Int, counters: CaptureCounters) async -> [String: JSONValue] {
        let limit = try? await store.workingLimit()
        var status: [String: JSONValue] = [
            "usedBytes": used.jsonValue, "maxBytes": store.maxBytes.jsonValue, "workingLimitBytes": (limit?.bytes ?? store.maxBytes).jsonValue,
            "limitSetBy": .string(limit?.bound == .disk ? "disk" : "retention.maxStoreBytes"),
            "evictedUnpublishedChunks": evicted.jsonValue, "prunedChunks": pruned.jsonValue,
            "notKeptSamples": counters.storeFullSamples.jsonValue, "fullEpisodes": counters.storeFullEpisodes.jsonValue,
        ]
        if let space = store.space() {
            status["diskFreeBytes"] = space.freeBytes.jsonValue
            status["reserveHeldBytes"] = space.reserveHeldBytes.jsonValue
        }
        if let room = limit?.diskRoomBytes { status["diskRoomBytes"] = room.jsonValue }
        status["writtenBytes"] = store.writes?.written().jsonValue ?? .null
        status["writtenBytesPerDay"] = store.writes?.perDay().map { $0.rounded() }.jsonValue ?? .null
        switch await engine.storeCondition {
        case .writable:
            status["state"] = "ok"
        case .full(let sinceMs, let reason):
            status["state"] = "full"
            status["fullSinceMs"] = sinceMs.jsonValue
            status["detail"] = .string(reason)
        case .atLimit(let sinceMs, let limitBytes):
            status["state"] = "atLimit"
            status["atLimitSinceMs"] = sinceMs.jsonValue
            status["detail"] = .string("the store reached retention.maxStoreBytes (\(limitBytes) bytes) with nothing published to prune: "
                + "the oldest unpublished chunks are evicted as storeFull gaps; bring the broker back, or raise retention.maxStoreBytes")
        }
        status["integrity"] = Self.integrity(store.integrity)
        status["movedAsideAtStart"] = .array(store.quarantined.map { .string($0) })
        // A damaged file outranks the rest: it takes no writes at all.
        if case .damaged(let sinceMs, let reason) = store.integrity {
            status["state"] = "damaged"
            status["damagedSinceMs"] = sinceMs.jsonValue
            status["detail"] = .string("\(StoreError.damaged(reason: reason))")
        }
        return status
    }

    /// How far the store's file is checked: `openChecked` (the bounded checks at open), `checking`
    /// (the full check in the background is reading it), `verified`, or `damaged`.
    static func integrity(_ integrity: StoreIntegrity) -> JSONValue {
        switch integrity {
        case .openChecked: ["state": "openChecked"]
        case .checking(let sinceMs): ["state": "checking", "sinceMs": sinceMs.jsonValue]
        case .verified(let atMs, let seconds): ["state": "verified", "atMs": atMs.jsonValue, "seconds": seconds.jsonValue]
        case .damaged(let sinceMs, let reason): ["state": "damaged", "sinceMs": sinceMs.jsonValue, "reason": .string(reason)]
        }
    }

    /// Configured sensors plus any sensor with an open session, with that session's summary.
    func sensors() async throws -> [JSONValue] {
        let open = await engine.openSessions()
        let ble = await providers.bluetoothStatus?()
        var seen: Set<String> = []
        var result: [JSONValue] = []
        func entry(address: String, userId: String?, name: String?, configured: Bool) -> JSONValue {
            let session = open.first { $0.device.uppercased() == address.uppercased() }
            var fields: [String: JSONValue] = ["address": .string(address), "configured": .bool(configured), "userId": userId.jsonValue, "name": name.jsonValue,
                                     "connection": .string(ble?.sensors[address] ?? "not implemented yet"), "session": session.map(AdminJSON.session) ?? .null]
            if let live = ble?.live[address] { fields.merge(AdminJSON.live(live)) { human, _ in human } }
            return .object(fields)
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

    func sessions(_ query: [String: String]) async throws -> JSONValue {
        let rangeName = query["range"] ?? "today"
        guard let period = Period(rawValue: rangeName) else { throw AdminError.badRequest("range must be today, week, month or all, not \"\(rangeName)\"") }
        let user = query["user"].flatMap { $0.isEmpty ? nil : $0 }
        // "Today" in the gateway's true time, which a board may date while the wall clock is wrong.
        let now = engine.clock.map { Date(timeIntervalSince1970: $0.now()) } ?? Date()
        let report = try await SessionReport.load(from: store, period: period, userId: user, calendar: calendar, now: now)
        return [
            "range": .string(period.rawValue), "count": report.count.jsonValue, "durationSeconds": (report.durationMs / 1000).jsonValue,
            "samples": report.samples.jsonValue, "fromMs": report.fromMs.jsonValue, "toMs": report.toMs.jsonValue,
            "sessions": .array(report.sessions.map(AdminJSON.session)),
        ]
    }

    func startSession(_ body: [UInt8]) async throws -> AdminResponse {
        let object = try Self.jsonObject(body)
        guard let device = object["device"]?.string, Self.isValidIdentifier(device, maxLength: 64) else {
            throw AdminError.badRequest("\"device\" must be a sensor address (1 to 64 letters, digits, ':', '-', '_', '.')")
        }
        let configured = configuration.sensors.first { $0.address.uppercased() == device.uppercased() }
        guard let userId = object["userId"]?.string ?? configured?.userId else {
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
            guard let intensity = value.int, (0...1_000_000).contains(intensity) else {
                throw AdminError.badRequest("hazard \"\(name)\": the intensity must be a whole number from 0 to 1000000")
            }
            hazards[name] = intensity
        }
        return hazards
    }

    func medals(_ query: [String: String]) async throws -> JSONValue {
        guard let user = query["user"], Self.isValidIdentifier(user, maxLength: 128) else { throw AdminError.badRequest("?user=ID is required") }
        let path = try DocumentPaths.medals(userId: user)
        // A damaged medals document shows as no medals here; capture reports it when it next updates them.
        let earned = try await store.document(path).flatMap { try? JSONValue.object(parsing: $0) } ?? [:]
        var medals: [String: Bool] = [:]
        for name in Medals.names { medals[name] = earned[name]?.bool ?? false }
        return ["userId": .string(user), "medals": medals.jsonValue]
    }

    func document(_ path: String) async throws -> AdminResponse {
        if DocumentPath.isCollectionPath(path) {
            return .json(200, ["collection": .string(path), "ids": try await store.documentIds(inCollection: path).jsonValue])
        }
        let documentPath: DocumentPath
        do { documentPath = try DocumentPath(path) } catch { throw AdminError.badRequest("\(error)") }
        guard let body = try await store.document(documentPath) else { throw AdminError.notFound("no document at \(path)") }
        return AdminResponse(status: 200, body: body)
    }

    static func jsonObject(_ body: [UInt8]) throws -> [String: JSONValue] {
        guard !body.isEmpty else { throw AdminError.badRequest("expected a JSON object body") }
        let parsed: JSONValue
        do { parsed = try JSONValue(parsing: body) } catch {
            throw AdminError.badRequest("the body is not valid JSON: \(error)")
        }
        guard let object = parsed.object else { throw AdminError.badRequest("expected a JSON object body") }
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
