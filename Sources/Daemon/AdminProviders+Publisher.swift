import Admin
import Foundation
import MQTTPublisher

extension AdminProviders {
    /// The admin API's view of the MQTT publisher: its state with the broker's last reason,
    /// and resync on request.
    static func publisher(_ publisher: MQTTPublisher) -> AdminProviders {
        AdminProviders(
            publisherStatus: {
                let status = await publisher.status
                var detail = status.connectedSince.map { "connected since \(ISO8601DateFormatter().string(from: $0)), MQTT \(status.protocolVersion)" }
                if let error = status.lastError {
                    detail = [detail, "last error at \(ISO8601DateFormatter().string(from: error.at)): \(error)"].compactMap { $0 }.joined(separator: "; ")
                }
                return Admin.PublisherStatus(state: status.state.rawValue, detail: detail, publishedTotal: Int64(status.acknowledged))
            },
            resync: {
                publisher.resync()
                return "resync requested: every retained document will be published again"
            })
    }
}
