import Foundation
import GatewayConfig
import XCTest

final class BoardSettingsTests: XCTestCase {
    let base = #""gatewayId":"g","bluetooth":{"transport":"hci:0"},"mqtt":{"host":"h"}"#

    func testDefaultsAreOff() throws {
        let configuration = try GatewayConfiguration.parse(Data("{\(base)}".utf8), baseDirectory: "/tmp")
        XCTAssertEqual(configuration.boards, BoardSettings(buttonStartsSession: false, ledOnStreaming: false, batteryIntervalSeconds: 300))
    }

    func testBoardsSectionIsRead() throws {
        let text = "{\(base),\"boards\":{\"buttonStartsSession\":true,\"ledOnStreaming\":true,\"batteryIntervalSeconds\":60}}"
        let configuration = try GatewayConfiguration.parse(Data(text.utf8), baseDirectory: "/tmp")
        XCTAssertEqual(configuration.boards, BoardSettings(buttonStartsSession: true, ledOnStreaming: true, batteryIntervalSeconds: 60))
    }

    func testBadBoardsValuesAreReportedByPath() {
        let text = "{\(base),\"boards\":{\"batteryIntervalSeconds\":1,\"led\":true}}"
        XCTAssertThrowsError(try GatewayConfiguration.parse(Data(text.utf8), baseDirectory: "/tmp")) { error in
            let message = "\(error)"
            XCTAssertTrue(message.contains("boards.batteryIntervalSeconds"), message)
            XCTAssertTrue(message.contains("boards.led"), message)
        }
    }
}
