import HCI

/// Why a link went down.
public enum LinkEnd: Sendable, Equatable, CustomStringConvertible {
    /// The controller's reason (Disconnection Complete), or the one the host gave when it
    /// ended the link itself.
    case controller(HCIStatus)
    /// The HCI transport closed under the host: the controller is gone, and there is no HCI
    /// status to report (the session gap says so instead of a made-up supervision timeout).
    case transportLost

    /// The HCI status for callers that need one: a lost transport reads as a connection timeout.
    public var status: HCIStatus {
        switch self {
        case let .controller(status): status
        case .transportLost: .connectionTimeout
        }
    }

    public var description: String {
        switch self {
        case let .controller(status): "\(status)"
        case .transportLost: "controller lost: the HCI transport closed"
        }
    }
}
