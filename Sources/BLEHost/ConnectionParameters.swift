import HCI
import L2CAP

/// Conversions between milliseconds and the controller's units, with the spec's range checks
/// (Core v5.4, Vol 4, Part E, 7.8.12 and 7.8.18).
enum ConnectionParameters {
    /// Connection interval in 1.25 ms units, supervision timeout in 10 ms units.
    static func range(minIntervalMs: Double, maxIntervalMs: Double, latency: UInt16,
                      supervisionTimeoutMs: Double) throws(BLEHostError) -> LEConnectionParameterRange {
        let minimum = (minIntervalMs / 1.25).rounded()
        let maximum = (maxIntervalMs / 1.25).rounded()
        let timeout = (supervisionTimeoutMs / 10).rounded()
        guard minimum.isFinite, maximum.isFinite, timeout.isFinite,
              (6...3200).contains(minimum), (6...3200).contains(maximum), minimum <= maximum else {
            throw .invalidParameter("connection interval \(minIntervalMs)...\(maxIntervalMs) ms; allowed 7.5...4000 ms, min <= max")
        }
        guard latency <= 499 else { throw .invalidParameter("peripheral latency \(latency); allowed 0...499") }
        guard (10...3200).contains(timeout) else {
            throw .invalidParameter("supervision timeout \(supervisionTimeoutMs) ms; allowed 100...32000 ms")
        }
        let request = ConnectionParameterUpdateRequest(identifier: 1, intervalMin: UInt16(minimum), intervalMax: UInt16(maximum),
                                                       latency: latency, timeout: UInt16(timeout))
        if case let .reject(violation) = request.validate() {
            throw .invalidParameter("\(violation)")
        }
        return LEConnectionParameterRange(connectionIntervalMin: UInt16(minimum), connectionIntervalMax: UInt16(maximum),
                                          maxLatency: latency, supervisionTimeout: UInt16(timeout))
    }
}
