import FoundationEssentials
import TextTools

extension ConfigTreeReader {
    func bluetooth(_ top: ObjectReader) -> BluetoothSettings {
        let fallback = BluetoothSettings(transport: .userChannel(adapter: 0), maxSensors: 4)
        guard let section = top.object("bluetooth", keys: ["transport", "maxSensors", "readIntervalMs"]) else {
            if !top.has("bluetooth") { sink.add("bluetooth", "required key is missing (expected an object with \"transport\")") }
            return fallback
        }
        var transport = fallback.transport
        if let text = section.string("transport", default: nil) {
            switch TransportSpec.parse(text) {
            case .success(let parsed): transport = parsed
            case .failure(let error): sink.add(section.child("transport"), error.message)
            }
        }
        var settings = BluetoothSettings(transport: transport, maxSensors: section.integer("maxSensors", default: 4, in: 1...8))
        settings.readIntervalMs = section.integer("readIntervalMs", default: settings.readIntervalMs, in: 0...1000, unit: " ms")
        return settings
    }

    func sensors(_ top: ObjectReader) -> [SensorSettings] {
        var seen: Set<String> = []
        return top.array("sensors").compactMap { item in
            guard let sensor = ObjectReader(item.value, path: item.path, keys: ["address", "userId", "name", "backfill"], sink: sink) else {
                if item.value == .null { sink.add(item.path, "expected an object, found null") }
                return nil
            }
            let address = (sensor.string("address", default: nil) ?? "").uppercased()
            if !address.isEmpty && !Self.isAddress(address) {
                sink.add(sensor.child("address"), "\"\(address)\" is not a Bluetooth address (expected six hex pairs like C4:BE:84:12:34:56)")
            } else if !seen.insert(address).inserted {
                sink.add(sensor.child("address"), "\(address) is listed twice")
            }
            let userId = identifier(sensor, "userId", default: nil) ?? ""
            return SensorSettings(address: address, userId: userId, name: sensor.string("name", default: "MetaWear \(address.suffix(5))") ?? "",
                                  backfill: backfill(sensor))
        }
    }

    /// `backfill`: `true`/`false`, or `{"whenFull": "overwrite" | "stop"}`.
    func backfill(_ sensor: ObjectReader) -> BackfillSettings? {
        if case .object = sensor.values["backfill"], let section = sensor.object("backfill", keys: ["whenFull"]) {
            switch section.string("whenFull", default: "overwrite") {
            case "stop": return BackfillSettings(overwrite: false)
            case "overwrite": return BackfillSettings(overwrite: true)
            case let other:
                sink.add(section.child("whenFull"), "\"\(other ?? "")\" is not a log policy (expected \"overwrite\" or \"stop\")")
                return nil
            }
        }
        return sensor.bool("backfill", default: false) ? BackfillSettings(overwrite: true) : nil
    }

    static func isAddress(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 6 && parts.allSatisfy { $0.count == 2 && UInt8($0, radix: 16) != nil }
    }

    func discovery(_ top: ObjectReader) -> DiscoverySettings? {
        guard let section = top.object("discovery", keys: ["enabled", "userId", "maxSensors"]) else { return nil }
        guard section.bool("enabled", default: true) else { return nil }
        let userId = identifier(section, "userId", default: nil) ?? ""
        return DiscoverySettings(userId: userId, maxSensors: section.integer("maxSensors", default: 4, in: 1...8))
    }

    func gyro(_ top: ObjectReader) -> GyroSettings {
        guard let section = top.object("gyro", keys: ["odrHz", "rangeDps"]) else { return GyroSettings(odrHz: 50, rangeDps: 2000) }
        return GyroSettings(
            odrHz: section.choice("odrHz", default: 50, among: GyroSettings.rates, unit: "Hz"),
            rangeDps: section.choice("rangeDps", default: 2000, among: GyroSettings.ranges, unit: "dps"))
    }

    func accelerometer(_ top: ObjectReader) -> AccelerometerSettings {
        let fallback = AccelerometerSettings(enabled: false, odrHz: 50, rangeG: 4)
        guard let section = top.object("accelerometer", keys: ["enabled", "odrHz", "rangeG"]) else { return fallback }
        return AccelerometerSettings(
            enabled: section.bool("enabled", default: false),
            odrHz: section.choice("odrHz", default: 50, among: AccelerometerSettings.rates, unit: "Hz"),
            rangeG: section.choice("rangeG", default: 4, among: AccelerometerSettings.ranges, unit: "g"))
    }

    func capture(_ top: ObjectReader) -> CaptureSettings {
        guard let section = top.object("capture", keys: ["chunkSize", "commitIntervalMs", "backfillCommitIntervalMs"]) else {
            return CaptureSettings(chunkSize: 2000, commitIntervalMs: 1000)
        }
        return CaptureSettings(
            chunkSize: section.integer("chunkSize", default: 2000, in: 10...10_000, unit: " points"),
            commitIntervalMs: section.integer("commitIntervalMs", default: 1000, in: 10...1000, unit: " ms"),
            backfillCommitIntervalMs: section.values["backfillCommitIntervalMs"] == nil ? nil
                : section.integer("backfillCommitIntervalMs", default: 1000, in: 1000...60_000, unit: " ms"))
    }

    func sessions(_ top: ObjectReader) -> SessionSettings {
        guard let section = top.object("sessions", keys: ["autoStart", "idleTimeoutSeconds", "maxDurationMinutes"]) else {
            return SessionSettings(autoStart: true, idleTimeoutSeconds: 300, maxDurationMinutes: 240)
        }
        return SessionSettings(
            autoStart: section.bool("autoStart", default: true),
            idleTimeoutSeconds: section.integer("idleTimeoutSeconds", default: 300, in: 5...86_400, unit: " s"),
            maxDurationMinutes: section.integer("maxDurationMinutes", default: 240, in: 1...1440, unit: " min"))
    }

    func mqtt(_ top: ObjectReader, gatewayId: String) -> MQTTSettings {
        let keys = ["host", "hosts", "port", "clientId", "username", "passwordFile", "tls", "topicPrefix", "keepaliveSeconds", "retainChunks",
                    "messageExpirySeconds", "sessionExpirySeconds", "failbackSeconds"]
        guard let section = top.object("mqtt", keys: keys) else {
            if !top.has("mqtt") { sink.add("mqtt", "required key is missing (expected an object with \"host\")") }
            return MQTTSettings(host: "127.0.0.1", port: 1883, clientId: "gyrogate", username: nil, password: nil, tls: nil,
                                topicPrefix: "", keepaliveSeconds: 30, retainChunks: false)
        }
        let hosts = section.has("hosts") ? brokerList(section, defaultPort: section.has("tls") ? 8883 : 1883) : nil
        if hosts != nil && section.has("host") { sink.add(section.child("host"), "give either host (one broker) or hosts (several), not both") }
        let host = hosts?.first?.host ?? section.string("host", default: nil) ?? ""
        if section.has("host") && (host.isEmpty || host.contains(where: \.isWhitespace)) {
            sink.add(section.child("host"), "\"\(host)\" is not a host name or address")
        }
        var password: Secret?
        if let file = existingFile(section, "passwordFile", required: false),
           let text = try? String(contentsOfFile: file, encoding: .utf8) {
            password = Secret(text.trimmed(where: \.isNewline))
        } else if let fromEnvironment = environment[GatewayConfiguration.passwordVariable] {
            password = Secret(fromEnvironment)
        }
        let username = section.optionalString("username")
        if password != nil && username == nil {
            sink.add(section.child("username"), "a password is configured but no username")
        }
        var tls: TLSSettings?
        if let tlsSection = section.object("tls", keys: ["caFile", "certFile", "keyFile"]) {
            let ca = existingFile(tlsSection, "caFile", required: true) ?? ""
            let cert = existingFile(tlsSection, "certFile", required: false)
            let key = existingFile(tlsSection, "keyFile", required: false)
            if (cert == nil) != (key == nil) {
                sink.add(tlsSection.child(cert == nil ? "certFile" : "keyFile"), "certFile and keyFile go together (client certificate)")
            }
            tls = TLSSettings(caFile: ca, certFile: cert, keyFile: key)
        }
        let prefix = section.string("topicPrefix", default: "") ?? ""
        if prefix.contains(where: { "+#".contains($0) }) || prefix.hasPrefix("$") || prefix.hasPrefix("/") {
            sink.add(section.child("topicPrefix"), "\"\(prefix)\" must not contain + or # nor start with $ or /")
        }
        if hosts != nil && section.has("port") { sink.add(section.child("port"), "with hosts, give each broker's port in its entry (\"host:port\")") }
        var settings = MQTTSettings(
            host: host, port: hosts?.first?.port ?? section.integer("port", default: tls == nil ? 1883 : 8883, in: 1...65535),
            clientId: section.string("clientId", default: "gyrogate-\(gatewayId)") ?? "", username: username,
            password: password, tls: tls, topicPrefix: prefix,
            keepaliveSeconds: section.integer("keepaliveSeconds", default: 30, in: 5...3600, unit: " s"),
            retainChunks: section.bool("retainChunks", default: false),
            messageExpirySeconds: section.integer("messageExpirySeconds", default: 0, in: 0...31_536_000, unit: " s"),
            sessionExpirySeconds: section.integer("sessionExpirySeconds", default: 604_800, in: 0...4_294_967_295, unit: " s"))
        settings.fallbackBrokers = Array((hosts ?? []).dropFirst())
        settings.failbackSeconds = section.integer("failbackSeconds", default: 30, in: 1...86_400, unit: " s")
        return settings
    }

    /// `mqtt.hosts`: brokers in order of preference, each `host`, `host:port` or `[v6]:port`.
    private func brokerList(_ section: ObjectReader, defaultPort: Int) -> [BrokerEndpoint] {
        var brokers: [BrokerEndpoint] = []
        for (itemPath, value) in section.array("hosts") {
            guard case .string(let text) = value, let broker = BrokerEndpoint(parsing: text, defaultPort: defaultPort) else {
                sink.add(itemPath, "expected a broker as \"host\" or \"host:port\" (port 1 to 65535)")
                continue
            }
            if brokers.contains(broker) { sink.add(itemPath, "\(broker) is listed twice") }
            brokers.append(broker)
        }
        if brokers.isEmpty { sink.add(section.child("hosts"), "expected at least one broker, like [\"10.0.0.2:1883\", \"10.0.0.3:1883\"]") }
        return brokers
    }

    func admin(_ top: ObjectReader) -> AdminSettings {
        let fallback = AdminSettings(socketPath: "/run/gyrogate/admin.sock", mode: 0o660, group: nil)
        guard let section = top.object("admin", keys: ["socketPath", "mode", "group", "allowedUids", "allowedGroups"]) else { return fallback }
        let path = resolve(section.string("socketPath", default: fallback.socketPath) ?? fallback.socketPath)
        if path.utf8.count > 107 { sink.add(section.child("socketPath"), "is \(path.utf8.count) bytes long; unix socket paths are limited to 107") }
        let modeText = section.string("mode", default: "0660") ?? "0660"
        var mode = fallback.mode
        if let parsed = Int(modeText, radix: 8), (0...0o777).contains(parsed), modeText.count <= 4 { mode = parsed }
        else { sink.add(section.child("mode"), "\"\(modeText)\" is not an octal file mode like \"0660\"") }
        var settings = AdminSettings(socketPath: path, mode: mode, group: section.optionalString("group"))
        for (itemPath, value) in section.array("allowedUids") {
            if case .integer(let uid) = value, let valid = UInt32(exactly: uid) { settings.allowedUids.append(valid) }
            else { sink.add(itemPath, "expected a uid (a whole number from 0 to 4294967295)") }
        }
        for (itemPath, value) in section.array("allowedGroups") {
            if case .string(let name) = value, !name.isEmpty { settings.allowedGroups.append(name) }
            else { sink.add(itemPath, "expected a group name") }
        }
        return settings
    }

    func location(_ top: ObjectReader) -> Location? {
        guard let section = top.object("location", keys: ["latitude", "longitude"]) else { return nil }
        let latitude = section.double("latitude", in: -90...90), longitude = section.double("longitude", in: -180...180)
        guard let latitude, let longitude else { return nil }
        return Location(latitude: latitude, longitude: longitude)
    }

    func retention(_ top: ObjectReader) -> RetentionSettings {
        guard let section = top.object("retention", keys: ["maxStoreBytes"]) else { return RetentionSettings(maxStoreBytes: 2 << 30) }
        return RetentionSettings(maxStoreBytes: section.integer("maxStoreBytes", default: 2 << 30, in: (1 << 20)...(1 << 40), unit: " bytes"))
    }

    func boards(_ top: ObjectReader) -> BoardSettings {
        guard let section = top.object("boards", keys: ["buttonStartsSession", "ledOnStreaming", "batteryIntervalSeconds"]) else {
            return BoardSettings()
        }
        return BoardSettings(
            buttonStartsSession: section.bool("buttonStartsSession", default: false),
            ledOnStreaming: section.bool("ledOnStreaming", default: false),
            batteryIntervalSeconds: section.integer("batteryIntervalSeconds", default: 300, in: 10...86_400, unit: " s"))
    }

    func homeAssistant(_ top: ObjectReader) -> HomeAssistantSettings {
        guard let section = top.object("homeAssistant", keys: ["enabled", "discoveryPrefix"]) else { return HomeAssistantSettings() }
        let prefix = section.string("discoveryPrefix", default: HomeAssistantSettings.defaultDiscoveryPrefix) ?? ""
        if let problem = Self.discoveryPrefixProblem(prefix) { sink.add(section.child("discoveryPrefix"), problem) }
        return HomeAssistantSettings(enabled: section.bool("enabled", default: false), discoveryPrefix: prefix)
    }

    /// The prefix is the first levels of every discovery topic: it must name topics, not filters.
    static func discoveryPrefixProblem(_ prefix: String) -> String? {
        if prefix.isEmpty { return "must not be empty (Home Assistant's default is \"homeassistant\")" }
        if let bad = prefix.first(where: { "+#".contains($0) }) {
            return "\"\(prefix)\" must not contain \"\(bad)\" (MQTT wildcards cannot be part of a topic)"
        }
        if prefix.contains(where: { $0 == "\0" || $0.isNewline }) { return "must not contain NUL or line breaks" }
        if prefix.hasPrefix("/") || prefix.hasSuffix("/") {
            return "\"\(prefix)\" must not start or end with \"/\" (the gateway adds the separators)"
        }
        if prefix.hasPrefix("$") { return "\"\(prefix)\" must not start with \"$\" (reserved by MQTT brokers)" }
        if zip(prefix, prefix.dropFirst()).contains(where: { $0 == "/" && $1 == "/" }) { return "\"\(prefix)\" must not contain an empty level (\"//\")" }
        return nil
    }
}
