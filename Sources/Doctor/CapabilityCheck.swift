import FoundationEssentials
import GatewayConfig
import TextTools

/// The HCI user channel needs CAP_NET_ADMIN (and CAP_NET_RAW for the raw HCI socket); the
/// other transports need no capability.
enum CapabilityCheck {
    static let netAdmin = 12
    static let netRaw = 13

    static func run(_ transport: TransportSpec, statusPath: String) -> CheckResult {
        guard case .userChannel(let adapter) = transport else {
            return .ok("capabilities", "none needed for \(transport)")
        }
        let text: String
        do { text = try String(contentsOfFile: statusPath, encoding: .utf8) } catch {
            return .problem("capabilities", .capabilitiesUnknown(reason: "cannot read \(statusPath): \(DirectoryProbe.errorText(error))"))
        }
        guard let effective = effectiveCapabilities(in: text) else {
            return .problem("capabilities", .capabilitiesUnknown(reason: "no CapEff line in \(statusPath)"))
        }
        var missing: [String] = []
        if effective & (1 << netAdmin) == 0 { missing.append("CAP_NET_ADMIN") }
        if effective & (1 << netRaw) == 0 { missing.append("CAP_NET_RAW") }
        guard missing.isEmpty else { return .problem("capabilities", .capabilitiesMissing(adapter: adapter, missing: missing)) }
        return .ok("capabilities", "CAP_NET_ADMIN and CAP_NET_RAW are effective (CapEff \(String(effective, radix: 16)))")
    }

    /// Whether CAP_NET_ADMIN is effective (what bringing an adapter down needs).
    static func hasNetAdmin(statusPath: String) -> Bool {
        guard let text = try? String(contentsOfFile: statusPath, encoding: .utf8),
              let effective = effectiveCapabilities(in: text) else { return false }
        return effective & (1 << netAdmin) != 0
    }

    /// The `CapEff:` mask of a `/proc/PID/status` text.
    static func effectiveCapabilities(in status: String) -> UInt64? {
        for line in status.split(separator: "\n") where line.hasPrefix("CapEff:") {
            return UInt64(line.dropFirst("CapEff:".count).trimmed(), radix: 16)
        }
        return nil
    }
}
