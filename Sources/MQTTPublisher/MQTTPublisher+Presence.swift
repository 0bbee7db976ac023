import CMosquitto
import FoundationEssentials
import GyroStore
import Logging
import TextTools
import ZoneInfo

/// The retained `gyrogate/{gatewayId}/status` document; its last will says offline.
extension MQTTPublisher {
    /// Hands the presence document over; its message id, nil when it could not be.
    @discardableResult
    func publishPresence(online: Bool) -> Int32? {
        guard let connection else { return nil }
        let body: String
        if online {
            let started = startedAt.iso8601UTC
            body = #"{"state":"online","version":"\#(jsonEscaped(configuration.version))","startedAt":"\#(started)","sessions":\#(status.connections)}"#
        } else {
            body = #"{"state":"offline"}"#
        }
        let message = OutboxMessage(seq: 0, topic: configuration.statusPath, qos: 1, retain: true,
                                    payload: Array(body.utf8), properties: nil, device: nil, createdAt: Date().timeIntervalSince1970)
        return connection.window.publishNow(message, flight: .presence)
    }

    func jsonEscaped(_ text: String) -> String {
        text.replacingEvery("\\", with: "\\\\").replacingEvery("\"", with: "\\\"")
    }
}
