import Foundation
import GatewayConfig
import XCTest

/// `mqtt.hosts`: several brokers in order of preference, instead of `mqtt.host` and `mqtt.port`.
final class BrokerListTests: XCTestCase {
    func parse(_ mqtt: String) throws(ConfigError) -> GatewayConfiguration {
        try GatewayConfiguration.parse(Data(#"{"gatewayId":"g","bluetooth":{"transport":"hci:0"},"mqtt":\#(mqtt)}"#.utf8), baseDirectory: "/tmp")
    }

    func problems(_ mqtt: String) -> [ConfigProblem] {
        do {
            _ = try parse(mqtt)
            return []
        } catch {
            return error.problems
        }
    }

    func testTheFirstIsPreferredAndTheRestFollowInOrder() throws {
        let mqtt = try parse(#"{"hosts":["10.0.0.2","broker-b.lan:1884","[fd00::3]:1885"],"failbackSeconds":60}"#).mqtt
        XCTAssertEqual(mqtt.host, "10.0.0.2")
        XCTAssertEqual(mqtt.port, 1883)
        XCTAssertEqual(mqtt.fallbackBrokers, [BrokerEndpoint(host: "broker-b.lan", port: 1884), BrokerEndpoint(host: "fd00::3", port: 1885)])
        XCTAssertEqual(mqtt.brokers.map(\.description), ["10.0.0.2:1883", "broker-b.lan:1884", "[fd00::3]:1885"])
        XCTAssertEqual(mqtt.failbackSeconds, 60)
        XCTAssertEqual(try parse(#"{"hosts":["fd00::2"]}"#).mqtt.brokers.map(\.description), ["[fd00::2]:1883"], "an IPv6 address alone")
    }

    func testOneHostIsOneBroker() throws {
        let mqtt = try parse(#"{"host":"h","port":1999}"#).mqtt
        XCTAssertEqual(mqtt.brokers, [BrokerEndpoint(host: "h", port: 1999)])
        XCTAssertEqual(mqtt.failbackSeconds, 30)
    }

    func testBadListsNameTheEntry() {
        let cases: [(String, String, String)] = [
            (#"{"hosts":[]}"#, "mqtt.hosts", "at least one broker"),
            (#"{"hosts":"a,b"}"#, "mqtt.hosts", "expected an array"),
            (#"{"hosts":["a", 7]}"#, "mqtt.hosts[1]", "host:port"),
            (#"{"hosts":["a:0"]}"#, "mqtt.hosts[0]", "port 1 to 65535"),
            (#"{"hosts":["x:y:z"]}"#, "mqtt.hosts[0]", "host:port"),
            (#"{"hosts":["a b"]}"#, "mqtt.hosts[0]", "host:port"),
            (#"{"hosts":["a:1883","a:1883"]}"#, "mqtt.hosts[1]", "listed twice"),
            (#"{"hosts":["a"],"host":"b"}"#, "mqtt.host", "not both"),
            (#"{"hosts":["a"],"port":1884}"#, "mqtt.port", "in its entry"),
            (#"{"hosts":["a"],"failbackSeconds":0}"#, "mqtt.failbackSeconds", "out of range"),
        ]
        for (mqtt, path, words) in cases {
            let found = problems(mqtt)
            XCTAssertTrue(found.contains { $0.path == path && $0.message.contains(words) }, "\(mqtt): \(found)")
        }
    }
}
