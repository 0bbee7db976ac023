import FoundationEssentials
import TextTools

/// The optional live-view page (`web`): an HTTP listener on TCP, read-only, off unless the
/// section names `listen`. Beyond loopback a bearer token (`tokenFile`) is required, since
/// the page shows who is wearing which sensor.
public struct WebSettings: Sendable, Equatable {
    public var host: String
    public var port: Int
    /// Read from `tokenFile`; required when `host` is not a loopback address.
    public var token: Secret?
    /// Browsers served live data at once; one more gets 503.
    public var maxViewers: Int = 4
    /// Points per second per sensor sent to the page, whatever the output data rate.
    public var pointsPerSecond: Int = 25

    public init(host: String, port: Int, token: Secret? = nil) {
        self.host = host
        self.port = port
        self.token = token
    }

    /// `127.0.0.0/8`, `::1` and `localhost`: addresses only this machine can reach.
    public static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}

extension ConfigTreeReader {
    func web(_ top: ObjectReader) -> WebSettings? {
        guard let section = top.object("web", keys: ["listen", "tokenFile", "maxViewers", "pointsPerSecond"]) else { return nil }
        let listen = section.string("listen", default: nil) ?? ""
        guard let (host, port) = Self.hostAndPort(listen) else {
            if section.has("listen") {
                sink.add(section.child("listen"), "\"\(listen)\" is not HOST:PORT (for example \"127.0.0.1:8080\", or \"[::1]:8080\")")
            }
            return nil
        }
        var settings = WebSettings(host: host, port: port)
        if let file = existingFile(section, "tokenFile", required: false),
           let text = try? String(contentsOfFile: file, encoding: .utf8) {
            let token = text.trimmed(where: { $0.isNewline || $0.isWhitespace })
            if token.utf8.count < 16 {
                sink.add(section.child("tokenFile"), "the token in \"\(file)\" is \(token.utf8.count) characters long; use at least 16 (for example: head -c 24 /dev/urandom | base64)")
            } else if token.contains(where: { !$0.isASCII || $0.isWhitespace || $0 == "&" || $0 == "#" || $0 == "%" }) {
                sink.add(section.child("tokenFile"), "the token must be printable ASCII without spaces, '&', '#' or '%' (it travels in a URL)")
            }
            settings.token = Secret(token)
        }
        if settings.token == nil && !WebSettings.isLoopback(host) && !section.has("tokenFile") {
            sink.add(section.child("tokenFile"), "required when web.listen is not a loopback address (\"\(host)\"): anyone on the network could watch the sensors; or listen on 127.0.0.1 and use an SSH tunnel")
        }
        settings.maxViewers = section.integer("maxViewers", default: 4, in: 1...64)
        settings.pointsPerSecond = section.integer("pointsPerSecond", default: 25, in: 1...100, unit: " points/s")
        return settings
    }

    /// `HOST:PORT` or `[IPv6]:PORT`, the port from 1 to 65535.
    static func hostAndPort(_ text: String) -> (String, Int)? {
        var host: Substring
        var portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            if host.contains(":") { return nil }
        }
        guard !host.isEmpty, !host.contains(where: \.isWhitespace), let port = Int(portText), (1...65535).contains(port) else { return nil }
        return (String(host), port)
    }
}
