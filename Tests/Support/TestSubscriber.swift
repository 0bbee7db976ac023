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

    let handle: OpaquePointer
    let lock = NSLock()
    var received: [Message] = []
    var subscribed = false
    var connectedCount = 0

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
            subscriber.lock.withLock { subscriber.received.append(item) }
        }
        mosquitto_subscribe_callback_set(handle) { _, userdata, _, _, _ in
            let subscriber = Unmanaged<TestSubscriber>.fromOpaque(userdata!).takeUnretainedValue()
            subscriber.lock.withLock { subscriber.subscribed = true }
        }
        mosquitto_connect_callback_set(handle) { _, userdata, _ in
            let subscriber = Unmanaged<TestSubscriber>.fromOpaque(userdata!).takeUnretainedValue()
            subscriber.lock.withLock { subscriber.connectedCount += 1 }
        }
        mosquitto_reconnect_delay_set(handle, 1, 1, false)
    }

    /// Connects, subscribes at `qos` and waits for SUBACK. libmosquitto reconnects by itself
    /// (a persistent session needs no new SUBSCRIBE).
    public func connect(port: Int, topics: [String], qos: Int32 = 1) async throws {
        guard mosquitto_connect(handle, "127.0.0.1", Int32(port), 30) == 0 else { throw SubscriberError.connectFailed }
        mosquitto_loop_start(handle)
        for topic in topics { mosquitto_subscribe(handle, nil, topic, qos) }
        guard await wait(timeout: 10, until: { _ in self.lock.withLock { self.subscribed } }) else { throw SubscriberError.noSuback }
    }

    public var messages: [Message] { lock.withLock { received } }

    /// Polls (test code only) until `condition` holds or `timeout` seconds pass.
    public func wait(timeout: Double, until condition: @escaping ([Message]) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition(messages) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition(messages)
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

/// Polls (test code only) until `condition` holds or `timeout` seconds pass.
public func eventually(timeout: Double, _ condition: @escaping @Sendable () async -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return await condition()
}
