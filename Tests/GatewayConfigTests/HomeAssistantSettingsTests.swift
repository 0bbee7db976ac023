import Foundation
import GatewayConfig
import XCTest

final class HomeAssistantSettingsTests: XCTestCase {
    let base = #""gatewayId":"g","bluetooth":{"transport":"hci:0"},"mqtt":{"host":"h"}"#

    func parse(_ section: String) throws(ConfigError) -> GatewayConfiguration {
        try GatewayConfiguration.parse(Data("{\(base),\"homeAssistant\":\(section)}".utf8), baseDirectory: "/tmp")
    }

    func problems(_ section: String) -> [ConfigProblem] {
        do {
            _ = try parse(section)
            return []
        } catch {
            return error.problems
        }
    }

    func testTheSectionIsOptionalAndOffByDefault() throws {
        let configuration = try GatewayConfiguration.parse(Data("{\(base)}".utf8), baseDirectory: "/tmp")
        XCTAssertEqual(configuration.homeAssistant, HomeAssistantSettings(enabled: false, discoveryPrefix: "homeassistant"))
        XCTAssertEqual(try parse("{}").homeAssistant, HomeAssistantSettings())
        XCTAssertEqual(try parse("null").homeAssistant, HomeAssistantSettings())
    }

    func testTheSectionIsRead() throws {
        XCTAssertEqual(try parse(#"{"enabled":true}"#).homeAssistant, HomeAssistantSettings(enabled: true, discoveryPrefix: "homeassistant"))
        XCTAssertEqual(try parse(#"{"enabled":true,"discoveryPrefix":"site-1/ha"}"#).homeAssistant,
                       HomeAssistantSettings(enabled: true, discoveryPrefix: "site-1/ha"))
        // A prefix is validated even while discovery is off: turning it on must not surprise.
        XCTAssertEqual(try parse(#"{"enabled":false,"discoveryPrefix":"ha"}"#).homeAssistant, HomeAssistantSettings(enabled: false, discoveryPrefix: "ha"))
    }

    func testBadPrefixesAreReportedByPath() {
        let cases: [(String, String)] = [
            (#"{"discoveryPrefix":""}"#, "must not be empty"),
            (#"{"discoveryPrefix":"home/+"}"#, "must not contain \"+\""),
            (#"{"discoveryPrefix":"home/#"}"#, "must not contain \"#\""),
            (#"{"discoveryPrefix":"/homeassistant"}"#, "must not start or end with \"/\""),
            (#"{"discoveryPrefix":"homeassistant/"}"#, "must not start or end with \"/\""),
            (#"{"discoveryPrefix":"$SYS"}"#, "must not start with \"$\""),
            (#"{"discoveryPrefix":"a//b"}"#, "empty level"),
            (#"{"discoveryPrefix":7}"#, "expected a string, found a number"),
        ]
        for (section, fragment) in cases {
            let found = problems(section)
            XCTAssertTrue(found.contains { $0.path == "homeAssistant.discoveryPrefix" && $0.message.contains(fragment) },
                          "\(section): expected a problem at homeAssistant.discoveryPrefix containing \"\(fragment)\", got \(found)")
        }
    }

    func testOtherMistakesAreReportedByPath() {
        XCTAssertTrue(problems(#"{"enabled":"yes"}"#).contains { $0.path == "homeAssistant.enabled" && $0.message.contains("expected true or false") })
        XCTAssertTrue(problems(#"{"enabled":true,"discoveryPrefx":"ha"}"#).contains {
            $0.path == "homeAssistant.discoveryPrefx" && $0.message.contains("did you mean \"discoveryPrefix\"")
        })
        XCTAssertTrue(problems(#"true"#).contains { $0.path == "homeAssistant" && $0.message.contains("expected an object") })
        let misspelt = (try? GatewayConfiguration.parse(Data("{\(base),\"homeAsistant\":{}}".utf8), baseDirectory: "/tmp")) == nil
        XCTAssertTrue(misspelt, "an unknown top-level key is an error")
    }
}
