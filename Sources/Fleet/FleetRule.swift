/// Which gateway of a fleet should capture a sensor, computed by every gateway alike from the
/// same reports (the retained documents), so that they agree without talking further.
///
/// The rule, in order:
/// 1. A sensor held (connected) by an online gateway stays there: a link is never taken away
///    while it works, whatever the signals say. This is the rule's hysteresis; a board that walks
///    away drops its link (supervision timeout) and is decided afresh.
/// 2. Otherwise, among the online gateways that hear it advertising and have a free slot, the one
///    with the highest rendezvous score: `weight / -ln(u)`, with `u` a hash of (gateway, sensor)
///    in (0, 1) and `weight` the signal in 10 dB steps. Louder wins in proportion; gateways that
///    hear it alike share sensors evenly; a gateway joining or leaving moves only its own share.
///    The steps keep a few dB of fading from changing the answer.
/// 3. Nobody hears it: no owner, and nobody tries.
///
/// Two gateways may still briefly disagree (one has not yet received the other's report): both
/// then try, and the board, which takes one central at a time, settles it; the loser sees the
/// winner's report name it as held and waits.
public enum FleetRule {
    public struct Decision: Sendable, Equatable, CustomStringConvertible {
        /// The gateway that should capture the sensor; nil when no online gateway hears it.
        public var owner: String?
        /// The gateway whose link to the board keeps it (rule 1), when one does.
        public var heldBy: String?
        public var reason: String
        public var description: String { reason }
    }

    public static func decide(sensor: String, reports: [FleetReport]) -> Decision {
        let online = reports.filter(\.online).sorted { $0.gateway < $1.gateway }
        let holders = online.filter { $0.holding.contains(sensor) }
        if let holder = best(holders, sensor: sensor, rssi: { _ in -60 }) {
            return Decision(owner: holder.gateway, heldBy: holder.gateway, reason: "held by \(holder.gateway)")
        }
        let candidates = online.filter { $0.hears[sensor] != nil && $0.freeSlots > 0 }
        guard let chosen = best(candidates, sensor: sensor, rssi: { $0.hears[sensor] ?? -127 }) else {
            let full = online.filter { $0.hears[sensor] != nil }.map(\.gateway)
            return Decision(owner: nil, heldBy: nil, reason: full.isEmpty ? "no gateway of the fleet hears it"
                                                             : "heard only by gateways with no free slot (\(full.joined(separator: ", ")))")
        }
        let rssi = chosen.hears[sensor] ?? 0
        let others = candidates.count - 1
        return Decision(owner: chosen.gateway, heldBy: nil,
                        reason: "\(chosen.gateway) hears it at \(rssi) dBm" + (others > 0 ? " (best score of \(candidates.count) that hear it)" : ""))
    }

    /// The report with the highest score; ties (equal hashes) go to the smaller gateway name.
    static func best(_ reports: [FleetReport], sensor: String, rssi: (FleetReport) -> Int) -> FleetReport? {
        var winner: (report: FleetReport, score: Double)?
        for report in reports {
            let score = score(gateway: report.gateway, sensor: sensor, rssi: rssi(report))
            if winner == nil || score > winner!.score { winner = (report, score) }
        }
        return winner?.report
    }

    /// Weighted rendezvous score (the "logarithmic method"): with weights w_i, gateway i wins with
    /// probability w_i / Σw over sensors.
    public static func score(gateway: String, sensor: String, rssi: Int) -> Double {
        let u = unitHash(gateway + "\u{0}" + sensor)
        return weight(rssi: rssi) / -log(u)
    }

    /// The signal in 10 dB steps above -110 dBm, at least 1: -45 dBm weighs 7, -85 dBm weighs 3.
    public static func weight(rssi: Int) -> Double {
        Double(max(1, (min(rssi, 0) + 110) / 10))
    }

    /// FNV-1a (64 bits) of the text's UTF-8, mapped into the open interval (0, 1). The same on
    /// every machine and every Swift version (Swift's `Hasher` is seeded per process).
    static func unitHash(_ text: String) -> Double {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        // A final mix: FNV's low bits vary little for names that differ in their last byte.
        hash ^= hash >> 33
        hash &*= 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        return (Double(hash >> 11) + 0.5) / Double(UInt64(1) << 53)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
