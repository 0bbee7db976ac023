import CMosquitto
import Glibc

/// Why the publisher is not (or no longer) connected, with the broker's or libmosquitto's
/// own words. Never carries the password.
public struct MQTTError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// The host could not be reached (refused, no route, name not resolved).
        case unreachable
        /// TLS handshake or certificate failure.
        case tls
        /// CONNACK refused the connection (`notAuthorized` split out).
        case refused
        /// CONNACK: bad user name or password, or not authorised.
        case notAuthorized
        /// The broker does not speak MQTT v5; the publisher falls back to 3.1.1.
        case unsupportedProtocol
        /// An established connection was lost or closed by the broker.
        case connectionLost
        /// A publish was rejected by libmosquitto or by the broker (PUBACK reason >= 128).
        case publishFailed
    }

    public var kind: Kind
    /// The broker's reason string (v5) or libmosquitto's description.
    public var message: String
    /// The v5 reason code, v3.1.1 return code or `MOSQ_ERR_*` value.
    public var code: Int32

    public init(kind: Kind, message: String, code: Int32) {
        self.kind = kind
        self.message = message
        self.code = code
    }

    public var description: String { "\(kind.rawValue): \(message) (\(code))" }

    /// From a `MOSQ_ERR_*` result of a libmosquitto call; `errno` as it was right after the call.
    static func call(_ rc: Int32, errno savedErrno: Int32) -> MQTTError {
        switch rc {
        case Int32(MOSQ_ERR_ERRNO.rawValue):
            return MQTTError(kind: .unreachable, message: String(cString: strerror(savedErrno)), code: rc)
        case Int32(MOSQ_ERR_EAI.rawValue):
            return MQTTError(kind: .unreachable, message: "host name not resolved", code: rc)
        case Int32(MOSQ_ERR_TLS.rawValue), Int32(MOSQ_ERR_TLS_HANDSHAKE.rawValue):
            return MQTTError(kind: .tls, message: String(cString: mosquitto_strerror(rc)), code: rc)
        default:
            return MQTTError(kind: .connectionLost, message: String(cString: mosquitto_strerror(rc)), code: rc)
        }
    }

    /// From a CONNACK that refused the connection.
    static func connack(_ reason: Int32, v5: Bool) -> MQTTError {
        if v5 {
            let text = String(cString: mosquitto_reason_string(reason))
            switch reason {
            case 134, 135: return MQTTError(kind: .notAuthorized, message: text, code: reason)
            case 132: return MQTTError(kind: .unsupportedProtocol, message: text, code: reason)
            default: return MQTTError(kind: .refused, message: text, code: reason)
            }
        }
        let text = String(cString: mosquitto_connack_string(reason))
        switch reason {
        case 4, 5: return MQTTError(kind: .notAuthorized, message: text, code: reason)
        case 1: return MQTTError(kind: .unsupportedProtocol, message: text, code: reason)
        default: return MQTTError(kind: .refused, message: text, code: reason)
        }
    }

    /// From `on_disconnect`: a v5 reason code the broker sent, or a `MOSQ_ERR_*` value.
    static func disconnect(_ reason: Int32, beforeConnack: Bool) -> MQTTError {
        let text = reason >= 128 ? String(cString: mosquitto_reason_string(reason)) : String(cString: mosquitto_strerror(reason))
        let prefix = beforeConnack ? "closed before CONNACK: " : ""
        return MQTTError(kind: reason == 134 || reason == 135 ? .notAuthorized : .connectionLost, message: prefix + text, code: reason)
    }
}
