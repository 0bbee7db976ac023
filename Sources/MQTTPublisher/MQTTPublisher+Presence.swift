import CMosquitto
import Foundation
import GyroStore
import Logging

/// The retained `gyrogate/{gatewayId}/status` document; its last will says offline.
extension MQTTPublisher {
    func publishPresence(online: Bool) {
        guard let connection else { return }
        let body: String
        if online {
            let started = ISO8601DateFormatter().string(from: startedAt)
            body = #"{"state":"online","version":"\#(jsonEscaped(configuration.version))","startedAt":"\#(started)","sessions":\#(status.connections)}"#
        } else {
            body = #"{"state":"offline"}"#
        }
        let properties = MessageProperties.make(v5: connection.v5, gatewayId: configuration.gatewayId, path: nil, expiry: nil)
        defer { MessageProperties.free(properties) }
        let (rc, mid) = connection.publish(topic: configuration.statusTopic, payload: Array(body.utf8), qos: 1, retain: true, properties: properties)
        if rc == Int32(MOSQ_ERR_SUCCESS.rawValue) {
            inFlight[mid] = .presence
            if !online { phase = .goingOffline(mid: mid) }
        } else if !online {
            phase = .stopped
        }
    }

    func jsonEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }
}
