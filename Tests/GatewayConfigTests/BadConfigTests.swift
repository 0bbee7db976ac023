import Foundation
import GatewayConfig
import XCTest

/// Each bad configuration must produce a message that names the key path and what was expected.
final class BadConfigTests: XCTestCase {
    var folder: String!

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "gyrogate-config-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try "secret\n".write(toFile: folder + "/password", atomically: true, encoding: .utf8)
        try "CA".write(toFile: folder + "/ca.pem", atomically: true, encoding: .utf8)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: folder) }

    /// A minimal valid configuration, with `edit` applied to its JSON object.
    func problems(_ edit: (inout [String: Any]) -> Void) throws -> [ConfigProblem] {
        var object: [String: Any] = [
            "gatewayId": "gw1",
            "bluetooth": ["transport": "tcp:127.0.0.1:7001"],
            "mqtt": ["host": "127.0.0.1"],
            "sensors": [["address": "C4:BE:84:00:00:01", "userId": "u1"]],
        ]
        edit(&object)
        let data = try JSONSerialization.data(withJSONObject: object)
        do {
            _ = try GatewayConfiguration.parse(data, baseDirectory: folder)
            return []
        } catch {
            return error.problems
        }
    }

    func expect(_ path: String, _ fragment: String, file: StaticString = #filePath, line: UInt = #line, _ edit: (inout [String: Any]) -> Void) throws {
        let found = try problems(edit)
        XCTAssertTrue(found.contains { $0.path == path && $0.message.contains(fragment) },
                      "expected a problem at \(path) containing \"\(fragment)\", got \(found)", file: file, line: line)
    }

    func testTheMinimalConfigurationIsValid() throws {
        XCTAssertEqual(try problems { _ in }, [])
    }

    func testBadConfigurationsNameThePathAndWhatWasExpected() throws {
        try expect("gyro.odrHz", "expected one of 25, 50, 100") { $0["gyro"] = ["odrHz": 30] }
        try expect("gyro.rangeDps", "expected one of 125, 250") { $0["gyro"] = ["rangeDps": 4000] }
        try expect("gyro.odrHz", "expected a number, found a string") { $0["gyro"] = ["odrHz": "fast"] }
        try expect("gyro.rangDps", "did you mean \"rangeDps\"") { $0["gyro"] = ["rangDps": 500] }
        try expect("mqtt.hsot", "did you mean \"host\"") { $0["mqtt"] = ["host": "h", "hsot": "x"] }
        try expect("timeZon", "did you mean \"timeZone\"") { $0["timeZon"] = "UTC" }
        try expect("mqtt.host", "required key is missing") { $0["mqtt"] = ["port": 1883] }
        try expect("mqtt", "required key is missing") { $0.removeValue(forKey: "mqtt") }
        try expect("mqtt.passwordFile", "does not exist") { $0["mqtt"] = ["host": "h", "username": "u", "passwordFile": "missing.txt"] }
        try expect("mqtt.port", "out of range; expected 1 to 65535") { $0["mqtt"] = ["host": "h", "port": 70000] }
        try expect("mqtt.tls.caFile", "does not exist") { $0["mqtt"] = ["host": "h", "tls": ["caFile": "nope.pem"]] }
        try expect("mqtt.tls.keyFile", "go together") { $0["mqtt"] = ["host": "h", "tls": ["caFile": "ca.pem", "certFile": "ca.pem"]] }
        try expect("mqtt.username", "no username") { $0["mqtt"] = ["host": "h", "passwordFile": "password"] }
        try expect("mqtt.topicPrefix", "must not contain + or #") { $0["mqtt"] = ["host": "h", "topicPrefix": "a/#"] }
        try expect("mqtt.messageExpirySeconds", "out of range") { $0["mqtt"] = ["host": "h", "messageExpirySeconds": -1] }
        try expect("mqtt.sessionExpirySeconds", "out of range") { $0["mqtt"] = ["host": "h", "sessionExpirySeconds": 5_000_000_000] }
        try expect("bluetooth.transport", "expected \"hci:N\", \"tcp:HOST:PORT\"") { $0["bluetooth"] = ["transport": "usb:0"] }
        try expect("bluetooth.transport", "port must be a number") { $0["bluetooth"] = ["transport": "tcp:localhost:http"] }
        try expect("bluetooth.transport", "baud rate must be one of") { $0["bluetooth"] = ["transport": "serial:/dev/ttyACM0:12345"] }
        try expect("bluetooth.maxSensors", "out of range; expected 1 to 8") { $0["bluetooth"] = ["transport": "hci:0", "maxSensors": 20] }
        try expect("timeZone", "is not an IANA time zone") { $0["timeZone"] = "Mars/Olympus_Mons" }
        try expect("timeZone", "is not an IANA time zone") { $0["timeZone"] = "../../../etc/passwd" }
        try expect("timeZone", "is not an IANA time zone") { $0["timeZone"] = "America" }  // a folder of zones
        try expect("timeZone", "is not an IANA time zone") { $0["timeZone"] = "CET" }  // a file, but a legacy name
        try expect("firstWeekday", "is not a day") { $0["firstWeekday"] = "funday" }
        try expect("sensors[0].address", "is not a Bluetooth address") { $0["sensors"] = [["address": "C4:BE:84", "userId": "u"]] }
        try expect("sensors[1].address", "listed twice") {
            $0["sensors"] = [["address": "C4:BE:84:00:00:01", "userId": "u"], ["address": "c4:be:84:00:00:01", "userId": "v"]]
        }
        try expect("sensors[0].userId", "must not contain \"+\"") { $0["sensors"] = [["address": "C4:BE:84:00:00:01", "userId": "a+b"]] }
        try expect("gatewayId", "must not start with \"$\"") { $0["gatewayId"] = "$SYS" }
        try expect("capture.chunkSize", "out of range") { $0["capture"] = ["chunkSize": 0] }
        try expect("capture.commitIntervalMs", "expected a whole number") { $0["capture"] = ["commitIntervalMs": 2.5] }
        try expect("sessions.autoStart", "expected true or false") { $0["sessions"] = ["autoStart": "yes"] }
        try expect("location.latitude", "out of range; expected -90 to 90") { $0["location"] = ["latitude": 95, "longitude": 0] }
        try expect("location.longitude", "required key is missing") { $0["location"] = ["latitude": 45] }
        try expect("admin.mode", "not an octal file mode") { $0["admin"] = ["mode": "rw-rw----"] }
        try expect("admin.allowedUids[1]", "expected a uid") { $0["admin"] = ["allowedUids": [1000, -1]] }
        try expect("admin.allowedGroups[0]", "expected a group name") { $0["admin"] = ["allowedGroups": [7]] }
        try expect("admin.allowedUids", "expected an array") { $0["admin"] = ["allowedUids": 1000] }
        try expect("retention.maxStoreBytes", "out of range") { $0["retention"] = ["maxStoreBytes": 10] }
        try expect("accelerometer.rangeG", "expected one of 2, 4, 8, 16") { $0["accelerometer"] = ["enabled": true, "rangeG": 3] }
        try expect("sensors", "expected an array, found an object") { $0["sensors"] = ["address": "x"] }
        try expect("sensors[0].backfill", "expected true or false") { $0["sensors"] = [["address": "C4:BE:84:00:00:01", "userId": "u", "backfill": "on"]] }
        try expect("sensors[0].backfill.whenFull", "expected \"overwrite\" or \"stop\"") {
            $0["sensors"] = [["address": "C4:BE:84:00:00:01", "userId": "u", "backfill": ["whenFull": "wrap"]]]
        }
    }

    func testBackfillIsPerSensor() throws {
        func sensors(_ entries: [[String: Any]]) throws -> [SensorSettings] {
            let object: [String: Any] = ["gatewayId": "gw1", "bluetooth": ["transport": "tcp:127.0.0.1:7001"], "mqtt": ["host": "127.0.0.1"],
                                         "sensors": entries]
            return try GatewayConfiguration.parse(try JSONSerialization.data(withJSONObject: object), baseDirectory: folder).sensors
        }
        let parsed = try sensors([["address": "C4:BE:84:00:00:01", "userId": "u", "backfill": true],
                                  ["address": "C4:BE:84:00:00:02", "userId": "u", "backfill": ["whenFull": "stop"]],
                                  ["address": "C4:BE:84:00:00:03", "userId": "u"]])
        XCTAssertEqual(parsed.map(\.backfill), [BackfillSettings(overwrite: true), BackfillSettings(overwrite: false), nil])
    }

    func testEveryProblemIsReportedAtOnce() throws {
        let found = try problems {
            $0["gyro"] = ["odrHz": 30]
            $0["timeZone"] = "Nowhere/Land"
            $0["bluetooth"] = ["transport": "bogus"]
        }
        XCTAssertEqual(Set(found.map(\.path)), ["gyro.odrHz", "timeZone", "bluetooth.transport"])
    }

    func testNotJSONSaysWhere() {
        XCTAssertThrowsError(try GatewayConfiguration.parse(Data("{\"a\": ".utf8), source: "x.json", baseDirectory: folder)) { error in
            XCTAssertTrue("\(error)".contains("x.json is not valid JSON: unexpected end of input at line 1, column 7 (expected a value)"), "\(error)")
        }
    }

    func testMissingFileIsNamed() {
        XCTAssertThrowsError(try GatewayConfiguration.load(path: folder + "/absent.json")) { error in
            XCTAssertTrue("\(error)".contains("cannot read"), "\(error)")
        }
    }
}
