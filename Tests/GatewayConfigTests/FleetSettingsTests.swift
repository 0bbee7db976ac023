import Foundation
import GatewayConfig
import XCTest

/// The optional `fleet` section: off without it, defaults with `{}`, bad values named by key.
final class FleetSettingsTests: XCTestCase {
    func parse(_ fleet: String?) throws(ConfigError) -> GatewayConfiguration {
        let section = fleet.map { #","fleet":\#($0)"# } ?? ""
        return try GatewayConfiguration.parse(Data(#"{"gatewayId":"g","bluetooth":{"transport":"hci:0"},"mqtt":{"host":"h"}\#(section)}"#.utf8),
                                              baseDirectory: "/tmp")
    }

    func problems(_ fleet: String) -> [String] {
        do {
            _ = try parse(fleet)
            return []
        } catch {
            return error.problems.map(\.description)
        }
    }

    func testOffWithoutTheSectionAndDefaultsWithAnEmptyOne() throws {
        XCTAssertNil(try parse(nil).fleet)
        XCTAssertNil(try parse(#"{"enabled":false}"#).fleet)
        XCTAssertEqual(try parse("{}").fleet, FleetSettings(keepAliveSeconds: 5, scanEverySeconds: 3, scanForMs: 1000))
        XCTAssertEqual(try parse(#"{"keepAliveSeconds":10,"scanEverySeconds":5,"scanForMs":2000}"#).fleet,
                       FleetSettings(keepAliveSeconds: 10, scanEverySeconds: 5, scanForMs: 2000))
    }

    func testBadValuesAreNamedByKey() {
        XCTAssertTrue(problems(#"{"keepAliveSeconds":2}"#).contains { $0.contains("fleet.keepAliveSeconds") }, "\(problems(#"{"keepAliveSeconds":2}"#))")
        XCTAssertTrue(problems(#"{"scanEverySeconds":1,"scanForMs":1500}"#).contains { $0.contains("fleet.scanForMs") && $0.contains("never pause") })
        XCTAssertTrue(problems(#"{"scanEvery":3}"#).contains { $0.contains("fleet.scanEvery") && $0.contains("unknown key") })
    }
}
