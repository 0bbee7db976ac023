import CMosquitto
import Foundation

/// A real MQTT subscriber (MQTT 3.1.1 on libmosquitto) that records what it receives.
public final class TestSubscriber: @unchecked Sendable {
    public struct Message: Sendable {
        public var topic: String
        public var payload: [UInt8]
        public var retained: Bool
        public var text: String { String(decoding: payload, as: UTF8.self) }
    }

    struct State: Sendable {
        var received: [Message] = []
        var subacks = 0
        var connectedCount = 0
        var markers: Set<String> = []
    }

    let handle: OpaquePointer
    let state = Watched(State())
    /// Topics of ``sync(timeout:)``'s markers, kept out of ``messages``.
    static let markerPrefix = "gyrogate-test/sync/"

    /// `clientId` and `cleanSession: false` make a persistent session that survives reconnects.
    public init(clientId: String? = nil, cleanSession: Bool = true) {
        _ = mosquitto_lib_init()
        handle = mosquitto_new(clientId, cleanSession, nil)!
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        mosquitto_message_callback_set(handle) { _, userdata, message in
            guard let message = message?.pointee else { return }
            let subscriber = Unmanaged<TestSubscriber>.fromOpaque(userdata!).takeUnretainedValue()
            let payload = message.payloadlen > 0 ? Array(UnsafeRawBufferPointer(start: message.payload, count: Int(message.payloadlen))) : []
            let item = Message(topic: String(cString: message.topic), payload: payload, retained: message.retain)
            subscriber.state.update { state in
                if item.topic.hasPrefix(TestSubscriber.markerPrefix) { state.markers.insert(item.topic) } else { state.received.append(item) }
            }
        }
        mosquitto_subscribe_callback_set(handle) { _, userdata, _, _, _ in
            let subscriber = Unmanaged<TestSubscriber>.fromOpaque(userdata!).takeUnretainedValue()
            subscriber.state.update { $0.subacks += 1 }
        }
        mosquitto_connect_callback_set(handle) { _, userdata, _ in
            let subscriber = Unmanaged<TestSubscriber>.fromOpaque(userdata!).takeUnretainedValue()
            subscriber.state.update { $0.connectedCount += 1 }
        }
        mosquitto_reconnect_delay_set(handle, 1, 1, false)
    }

    /// Connects, subscribes at `qos` and waits for every SUBACK. libmosquitto reconnects by itself
    /// (a persistent session needs no new SUBSCRIBE).
    public func connect(port: Int, topics: [String], qos: Int32 = 1) async throws {
        guard mosquitto_connect(handle, "127.0.0.1", Int32(port), 30) == 0 else { throw SubscriberError.connectFailed }
        mosquitto_loop_start(handle)
        let before = state.value.subacks
        for topic in topics { mosquitto_subscribe(handle, nil, topic, qos) }
        guard await state.wait(timeout: 10, until: { $0.subacks >= before + topics.count }) else { throw SubscriberError.noSuback }
    }

    public var messages: [Message] { state.value.received }

    /// Waits until `condition` holds for the messages received (each arrival wakes it), or
    /// `timeout` seconds pass.
    public func wait(timeout: Double, until condition: @escaping ([Message]) -> Bool) async -> Bool {
        await state.wait(timeout: timeout) { condition($0.received) }
    }

    /// Returns once everything the broker had queued for this subscriber has arrived: publishes
    /// a marker to itself and waits for it. The broker delivers in order, so every message it
    /// sent before (the retained ones of a subscription, say) came first. False on timeout.
    public func sync(timeout: Double = 10) async -> Bool {
        let topic = Self.markerPrefix + UUID().uuidString
        let before = state.value.subacks
        mosquitto_subscribe(handle, nil, topic, 1)
        guard await state.wait(timeout: timeout, until: { $0.subacks > before }) else { return false }
        mosquitto_publish(handle, nil, topic, 0, nil, 1, false)
        return await state.wait(timeout: timeout) { $0.markers.contains(topic) }
    }

    public func disconnect() {
        mosquitto_disconnect(handle)
        mosquitto_loop_stop(handle, false)
    }

    deinit {
        mosquitto_disconnect(handle)
        mosquitto_loop_stop(handle, true)
        mosquitto_destroy(handle)
    }

    public enum SubscriberError: Error { case connectFailed, noSuback }
}

