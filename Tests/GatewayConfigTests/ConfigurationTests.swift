import Foundation
import GatewayConfig
import XCTest
import ZoneInfo

final class ConfigurationTests: XCTestCase {
    func testTheShippedDefaultConfigurationLoads() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let configuration = try GatewayConfiguration.load(path: root.appendingPathComponent("config.json").path, environment: [:])
        XCTAssertEqual(configuration.gatewayId, "gyrogate-demo")
        XCTAssertEqual(configuration.bluetooth.transport, .tcp(host: "127.0.0.1", port: 7001))
        XCTAssertEqual(configuration.capture.chunkSize, 2000)
        XCTAssertEqual(configuration.firstWeekday, 2)
        XCTAssertTrue(configuration.dataDirectory.hasPrefix("/"))
    }

    /// Reads are batched longer on sockets than on a serial line, whose tty buffer is small;
    /// the key overrides both.
    func testReadIntervalDefaultsByTransport() throws {
        func interval(_ bluetooth: String) throws -> Int {
            try GatewayConfiguration.parse(Data(#"{"gatewayId":"g","bluetooth":\#(bluetooth),"mqtt":{"host":"h"}}"#.utf8),
                                           baseDirectory: NSTemporaryDirectory(), environment: [:]).bluetooth.readIntervalMs
        }
        XCTAssertEqual(try interval(#"{"transport":"hci:0"}"#), 500)
        XCTAssertEqual(try interval(#"{"transport":"tcp:127.0.0.1:7001"}"#), 500)
        XCTAssertEqual(try interval(#"{"transport":"serial:/dev/ttyAMA0:115200"}"#), 100)
        XCTAssertEqual(try interval(#"{"transport":"serial:/dev/ttyAMA0:115200","readIntervalMs":40}"#), 40)
        XCTAssertEqual(try interval(#"{"transport":"hci:0","readIntervalMs":0}"#), 0)
    }

    /// The zone's rules come from the system's tzdata; without the key, the machine's own zone.
    func testTimeZoneIsReadFromTheSystemsZoneFiles() throws {
        let named = try GatewayConfiguration.parse(
            Data(#"{"gatewayId":"g","timeZone":"Europe/Berlin","bluetooth":{"transport":"hci:0"},"mqtt":{"host":"h"}}"#.utf8),
            baseDirectory: NSTemporaryDirectory(), environment: [:])
        XCTAssertEqual(named.timeZone.identifier, "Europe/Berlin")
        XCTAssertEqual(named.timeZone.offset(atEpochSeconds: 1_782_864_000), 7200)  // 2026-07-01
        XCTAssertEqual(named.timeZone.offset(atEpochSeconds: 1_798_761_600), 3600)  // 2027-01-01
        let utc = try GatewayConfiguration.parse(
            Data(#"{"gatewayId":"g","timeZone":"UTC","bluetooth":{"transport":"hci:0"},"mqtt":{"host":"h"}}"#.utf8),
            baseDirectory: NSTemporaryDirectory(), environment: [:])
        XCTAssertEqual(utc.timeZone, .utc)
        if let system = Zone.systemIdentifier(), system.contains("/") || system == "UTC" {
            let unnamed = try GatewayConfiguration.parse(Data(#"{"gatewayId":"g","bluetooth":{"transport":"hci:0"},"mqtt":{"host":"h"}}"#.utf8),
                                                         baseDirectory: NSTemporaryDirectory(), environment: [:])
            XCTAssertEqual(unnamed.timeZone.identifier, system)
        }
    }

    func testPasswordComesFromAFileOrTheEnvironmentAndIsNeverPrinted() throws {
        let folder = NSTemporaryDirectory() + "gyrogate-secret-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "hunter2\n".write(toFile: folder + "/pw", atomically: true, encoding: .utf8)
        let fromFile = Data(#"{"gatewayId":"g","bluetooth":{"transport":"hci:0"},"mqtt":{"host":"h","username":"u","passwordFile":"pw"}}"#.utf8)
        let configuration = try GatewayConfiguration.parse(fromFile, baseDirectory: folder)
        XCTAssertEqual(configuration.mqtt.password?.value, "hunter2")
        XCTAssertFalse("\(configuration)".contains("hunter2"))
        XCTAssertFalse(String(reflecting: configuration).contains("hunter2"))

        let fromEnvironment = Data(#"{"gatewayId":"g","bluetooth":{"transport":"hci:0"},"mqtt":{"host":"h","username":"u"}}"#.utf8)
        let viaEnvironment = try GatewayConfiguration.parse(fromEnvironment, baseDirectory: folder, environment: ["GYROGATE_MQTT_PASSWORD": "s3"])
        XCTAssertEqual(viaEnvironment.mqtt.password?.value, "s3")
    }

    func testMQTTExpiryIntervals() throws {
        let defaults = try GatewayConfiguration.parse(Data(#"{"gatewayId":"g","bluetooth":{"transport":"hci:0"},"mqtt":{"host":"h"}}"#.utf8),
                                                      baseDirectory: NSTemporaryDirectory(), environment: [:])
        XCTAssertEqual(defaults.mqtt.messageExpirySeconds, 0)
        XCTAssertEqual(defaults.mqtt.sessionExpirySeconds, 604_800)
        let set = try GatewayConfiguration.parse(
            Data(#"{"gatewayId":"g","bluetooth":{"transport":"hci:0"},"mqtt":{"host":"h","messageExpirySeconds":60,"sessionExpirySeconds":0}}"#.utf8),
            baseDirectory: NSTemporaryDirectory(), environment: [:])
        XCTAssertEqual(set.mqtt.messageExpirySeconds, 60)
        XCTAssertEqual(set.mqtt.sessionExpirySeconds, 0)
    }

    func testAdminAccessLists() throws {
        let json = #"{"gatewayId":"g","bluetooth":{"transport":"hci:0"},"mqtt":{"host":"h"},"admin":{"socketPath":"/run/g.sock","mode":"0600","group":"ops","allowedUids":[0,1000],"allowedGroups":["ops"]}}"#
        let admin = try GatewayConfiguration.parse(Data(json.utf8), baseDirectory: "/").admin
        XCTAssertEqual(admin.socketPath, "/run/g.sock")
        XCTAssertEqual(admin.mode, 0o600)
        XCTAssertEqual(admin.group, "ops")
        XCTAssertEqual(admin.allowedUids, [0, 1000])
        XCTAssertEqual(admin.allowedGroups, ["ops"])
        let defaults = try GatewayConfiguration.parse(Data(#"{"gatewayId":"g","bluetooth":{"transport":"hci:0"},"mqtt":{"host":"h"}}"#.utf8), baseDirectory: "/").admin
        XCTAssertEqual(defaults.allowedUids, [])
        XCTAssertEqual(defaults.allowedGroups, [])
    }

    func testTransports() {
        XCTAssertEqual(try TransportSpec.parse("hci:1").get(), .userChannel(adapter: 1))
        XCTAssertEqual(try TransportSpec.parse("tcp:::1:7001").get(), .tcp(host: "::1", port: 7001))
        XCTAssertEqual(try TransportSpec.parse("serial:/dev/ttyACM0:1000000").get(), .serial(device: "/dev/ttyACM0", baud: 1_000_000))
        XCTAssertThrowsError(try TransportSpec.parse("hci:x").get())
        XCTAssertThrowsError(try TransportSpec.parse("serial:ttyS0:115200").get())
    }
}
