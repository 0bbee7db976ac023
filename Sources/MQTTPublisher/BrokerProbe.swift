import CMosquitto
import Glibc
import PosixThreads

/// One short-lived test connection to the broker, for `gyrogate doctor`: connect with the
/// publisher's credentials and TLS files, publish one QoS 1 non-retained message, wait for its
/// PUBACK, disconnect.
///
/// It uses its own client id (the caller passes one that differs from the gateway's, so a
/// running gateway is not taken over), a clean session and no last will, so it leaves nothing
/// behind on the broker. Like the publisher it tries MQTT v5 first and falls back to 3.1.1 when
/// the broker refuses v5.
///
/// Threading: everything runs on one thread of its own (blocking connect, then
/// `mosquitto_loop`); the callbacks run on that thread and only record what happened.
public enum BrokerProbe {
    public enum ProtocolVersion: String, Sendable, Equatable {
        case v5 = "5"
        case v311 = "3.1.1"
    }

    public enum Outcome: Sendable, Equatable {
        /// The broker acknowledged the publish (PUBACK reason < 128).
        case acknowledged(ProtocolVersion)
        /// Connecting failed: unreachable, TLS, refused or not authorised (see ``MQTTError/kind``).
        case connectFailed(MQTTError)
        /// A v5 PUBACK with a failure reason code (135: not authorised, i.e. an ACL).
        case publishRefused(reasonCode: Int32, reason: String)
        /// The publish could not be sent, the connection was lost or no PUBACK came in time.
        case publishFailed(MQTTError, ProtocolVersion)
    }

    /// Runs the probe on a thread of its own; `timeout` bounds each connection attempt
    /// (connect, CONNACK and PUBACK).
    public static func run(_ configuration: PublisherConfiguration, clientId: String, topic: String, payload: [UInt8],
                           timeout: Duration = .seconds(10)) async -> Outcome {
        await withCheckedContinuation { continuation in
            let started = DetachedThread.start(name: "mqtt-probe") {
                continuation.resume(returning: runBlocking(configuration, clientId: clientId, topic: topic, payload: payload, timeout: timeout))
            }
            if !started {
                continuation.resume(returning: .connectFailed(MQTTError(kind: .refused, message: "no thread for the probe (EAGAIN)", code: -1)))
            }
        }
    }

    /// The probe on the calling thread (blocks up to twice `timeout`).
    public static func runBlocking(_ configuration: PublisherConfiguration, clientId: String, topic: String, payload: [UInt8],
                                   timeout: Duration = .seconds(10)) -> Outcome {
        guard MosquittoConnection.libraryReady else {
            return .connectFailed(MQTTError(kind: .refused, message: "libmosquitto could not be initialised", code: -1))
        }
        let first = attempt(configuration, v5: true, clientId: clientId, topic: topic, payload: payload, timeout: timeout)
        // As the publisher does: a broker without v5 refuses it (132), or answers with a
        // 3.1.1 CONNACK libmosquitto cannot parse as v5, or closes the socket.
        if case .connectFailed(let error) = first,
           error.kind == .unsupportedProtocol || error.code == Int32(MOSQ_ERR_PROTOCOL.rawValue)
            || error.code == Int32(MOSQ_ERR_MALFORMED_PACKET.rawValue) {
            return attempt(configuration, v5: false, clientId: clientId, topic: topic, payload: payload, timeout: timeout)
        }
        return first
    }

    /// What the callbacks saw; touched only on the probe's thread.
    private final class Observed {
        var connack: Int32?
        var disconnect: Int32?
        var puback: (mid: Int32, reason: Int32)?
        var libraryError: String?
    }

    private static func attempt(_ configuration: PublisherConfiguration, v5: Bool, clientId: String, topic: String,
                                payload: [UInt8], timeout: Duration) -> Outcome {
        let version: ProtocolVersion = v5 ? .v5 : .v311
        let observed = Observed()
        let userdata = Unmanaged.passRetained(observed)
        defer { userdata.release() }
        guard let handle = mosquitto_new(clientId, true, userdata.toOpaque()) else {
            return .connectFailed(MQTTError(kind: .refused, message: "mosquitto_new failed", code: -1))
        }
        defer { mosquitto_destroy(handle) }
        mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311)
        installCallbacks(handle)
        if let error = MosquittoConnection.applyCredentials(handle, configuration) { return .connectFailed(error) }

        let rc = mosquitto_connect_bind_v5(handle, configuration.host, Int32(configuration.port), Int32(configuration.keepaliveSeconds), nil, nil)
        let savedErrno = errno
        guard rc == Int32(MOSQ_ERR_SUCCESS.rawValue) else {
            return .connectFailed(withDetail(.call(rc, errno: savedErrno), observed))
        }
        defer {
            mosquitto_disconnect(handle)
            _ = mosquitto_loop(handle, 50, 1)
        }
        let deadline = ContinuousClock.now + timeout
        var mid: Int32 = 0
        var published = false
        while ContinuousClock.now < deadline {
            let rc = mosquitto_loop(handle, 100, 1)
            let savedErrno = errno
            if let connack = observed.connack, connack != 0 {
                return .connectFailed(MQTTError.connack(connack, v5: v5))
            }
            if let puback = observed.puback, published, puback.mid == mid {
                if puback.reason >= 128 {
                    return .publishRefused(reasonCode: puback.reason, reason: String(cString: mosquitto_reason_string(puback.reason)))
                }
                return .acknowledged(version)
            }
            if let reason = observed.disconnect {
                let error = withDetail(.disconnect(reason, beforeConnack: observed.connack == nil), observed)
                return observed.connack == nil ? .connectFailed(error) : .publishFailed(error, version)
            }
            if rc != Int32(MOSQ_ERR_SUCCESS.rawValue) {
                let error = withDetail(.call(rc, errno: savedErrno), observed)
                return observed.connack == nil ? .connectFailed(error) : .publishFailed(error, version)
            }
            if observed.connack == 0, !published {
                let rc = payload.withUnsafeBytes { bytes in
                    mosquitto_publish_v5(handle, &mid, topic, Int32(bytes.count), bytes.baseAddress, 1, false, nil)
                }
                guard rc == Int32(MOSQ_ERR_SUCCESS.rawValue) else {
                    let text = String(cString: mosquitto_strerror(rc))
                    return .publishFailed(MQTTError(kind: .publishFailed, message: "publish to \(topic) failed: \(text)", code: rc), version)
                }
                published = true
            }
        }
        if observed.connack == nil {
            return .connectFailed(withDetail(MQTTError(kind: .unreachable, message: "no CONNACK within \(timeout)", code: -1), observed))
        }
        return .publishFailed(MQTTError(kind: .publishFailed, message: "no PUBACK within \(timeout)", code: -1), version)
    }

    /// Appends OpenSSL's reason (logged by libmosquitto) to a TLS or connection error.
    private static func withDetail(_ error: MQTTError, _ observed: Observed) -> MQTTError {
        guard let detail = observed.libraryError, error.kind == .tls || error.kind == .connectionLost || error.kind == .unreachable else {
            return error
        }
        var error = error
        error.message += " (\(detail))"
        return error
    }

    private static func installCallbacks(_ handle: OpaquePointer) {
        mosquitto_connect_v5_callback_set(handle) { _, userdata, rc, _, _ in
            guard let userdata else { return }
            Unmanaged<Observed>.fromOpaque(userdata).takeUnretainedValue().connack = rc
        }
        mosquitto_disconnect_v5_callback_set(handle) { _, userdata, rc, _ in
            guard let userdata else { return }
            let observed = Unmanaged<Observed>.fromOpaque(userdata).takeUnretainedValue()
            if observed.disconnect == nil { observed.disconnect = rc }
        }
        mosquitto_publish_v5_callback_set(handle) { _, userdata, mid, reason, _ in
            guard let userdata else { return }
            Unmanaged<Observed>.fromOpaque(userdata).takeUnretainedValue().puback = (mid, reason)
        }
        mosquitto_log_callback_set(handle) { _, userdata, level, message in
            guard let userdata, level & MOSQ_LOG_ERR != 0, let message else { return }
            Unmanaged<Observed>.fromOpaque(userdata).takeUnretainedValue().libraryError = String(cString: message)
        }
    }
}
