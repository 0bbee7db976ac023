/// The central's decision on a peer's Connection Parameter Update Request.
public enum ConnectionParameterVerdict: Equatable, Sendable {
    case accept
    case reject(ConnectionParameterViolation)

    /// The result to send back in the response.
    public var result: ConnectionParameterUpdateResponse.Result {
        self == .accept ? .accepted : .rejected
    }
}

/// Which rule of Core v5.4, Vol 3, Part A, 4.20 (ranges) and Vol 6, Part B, 4.5.2 (timeout) a
/// request breaks. The peer is at fault; the values are echoed for the log.
public enum ConnectionParameterViolation: Error, Equatable, Sendable {
    case intervalOutOfRange(min: UInt16, max: UInt16)
    case intervalMinAboveMax(min: UInt16, max: UInt16)
    case latencyTooHigh(UInt16)
    case timeoutOutOfRange(UInt16)
    /// The supervision timeout must exceed (1 + latency) x interval max x 2, or the link drops
    /// while the peripheral legitimately sleeps.
    case timeoutTooShortForLatency(timeout: UInt16, latency: UInt16, intervalMax: UInt16)
}

extension ConnectionParameterViolation: CustomStringConvertible {
    public var description: String {
        switch self {
        case let .intervalOutOfRange(min, max):
            return "peer asked for interval \(min)...\(max) (x1.25 ms); allowed 6...3200"
        case let .intervalMinAboveMax(min, max):
            return "peer asked for interval min \(min) above max \(max)"
        case let .latencyTooHigh(latency):
            return "peer asked for latency \(latency); allowed 0...499"
        case let .timeoutOutOfRange(timeout):
            return "peer asked for supervision timeout \(timeout) (x10 ms); allowed 10...3200"
        case let .timeoutTooShortForLatency(timeout, latency, intervalMax):
            return "peer's supervision timeout \(Int(timeout) * 10) ms is not above (1 + \(latency)) x \(Double(intervalMax) * 1.25) ms x 2"
        }
    }
}

extension ConnectionParameterUpdateRequest {
    /// Checks the request against the spec's ranges, without any local policy.
    ///
    /// The timeout rule `timeout x 10 ms > (1 + latency) x intervalMax x 1.25 ms x 2` is evaluated
    /// in integers as `timeout x 4 > (1 + latency) x intervalMax`.
    public func validate() -> ConnectionParameterVerdict {
        guard (6...3200).contains(intervalMin), (6...3200).contains(intervalMax) else {
            return .reject(.intervalOutOfRange(min: intervalMin, max: intervalMax))
        }
        guard intervalMin <= intervalMax else { return .reject(.intervalMinAboveMax(min: intervalMin, max: intervalMax)) }
        guard latency <= 499 else { return .reject(.latencyTooHigh(latency)) }
        guard (10...3200).contains(timeout) else { return .reject(.timeoutOutOfRange(timeout)) }
        guard Int(timeout) * 4 > (1 + Int(latency)) * Int(intervalMax) else {
            return .reject(.timeoutTooShortForLatency(timeout: timeout, latency: latency, intervalMax: intervalMax))
        }
        return .accept
    }
}
