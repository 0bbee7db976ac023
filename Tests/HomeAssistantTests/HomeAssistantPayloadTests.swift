import Daemon
import Foundation
import GatewayConfig
import Sensors
import XCTest

/// The documents are written by JSONValue since the gateway left full Foundation; Home
/// Assistant and the change detection compare them as bytes, so they must be the bytes that
/// JSONSerialization (sorted keys, unescaped slashes) wrote for the same content before.
final class HomeAssistantPayloadTests: XCTestCase {
    func configuration() throws -> GatewayConfiguration {
        let object: [String: Any] = [
            "gatewayId": "gw.ha-1",
            "dataDirectory": NSTemporaryDirectory(),
            "bluetooth": ["transport": "tcp:127.0.0.1:1"],
            "sensors": [["address": "C4:BE:84:00:00:01", "userId": "user0", "name": "Board 0"],
                        ["address": "C4:BE:84:00:00:02", "userId": "user1", "name": "Board \"1\" / left"]],
            "mqtt": ["host": "127.0.0.1", "port": 1883, "topicPrefix": "site/", "clientId": "gyrogate-ha-test"],
            "homeAssistant": ["enabled": true],
        ]
        return try GatewayConfiguration.parse(try JSONSerialization.data(withJSONObject: object), baseDirectory: NSTemporaryDirectory())
    }

    func assertSameBytesAsJSONSerialization(_ payload: [UInt8], _ name: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let object = try JSONSerialization.jsonObject(with: Data(payload))
        let expected = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        XCTAssertEqual(String(decoding: payload, as: UTF8.self), String(decoding: expected, as: UTF8.self), name, file: file, line: line)
    }

    func testDiscoveryDocumentsAreTheBytesJSONSerializationWrote() throws {
        let discovery = HomeAssistantDiscovery(configuration: try configuration(), version: "1.2.3")
        var status = SensorStatus(address: "C4:BE:84:00:00:01", userId: "user0", state: .streaming, odrHz: 100)
        status.model = "MetaMotionRL"
        status.firmware = "1.7.3"
        let documents = discovery.documents(sensors: [status])
        XCTAssertEqual(documents.count, 14)
        for (topic, payload) in documents { try assertSameBytesAsJSONSerialization(payload, topic) }
    }

    func testStateDocumentIsTheBytesJSONSerializationWrote() throws {
        let discovery = HomeAssistantDiscovery(configuration: try configuration(), version: "1.2.3")
        var status = SensorStatus(address: "C4:BE:84:00:00:01", userId: "user0", state: .streaming, odrHz: 100)
        status.batteryPercent = 87
        status.samplesReceived = 123_456
        status.gaps = 2
        for rate in [nil, 0, 99.9, 0.1, 1e-7] as [Double?] {
            let snapshot = HomeAssistantDiscovery.Snapshot(outboxDepth: 3, storeUsedBytes: 1_234_567, storeMaxBytes: 10_000_000,
                                                           samplesPerSecond: rate, sensors: [status], openSessions: ["C4:BE:84:00:00:01"])
            try assertSameBytesAsJSONSerialization(discovery.state(snapshot), "state, \(String(describing: rate)) samples/s")
        }
    }
}
