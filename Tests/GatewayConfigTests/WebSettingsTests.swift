import Foundation
import GatewayConfig
import XCTest

final class WebSettingsTests: XCTestCase {
    let base = #""gatewayId":"g","bluetooth":{"transport":"hci:0"},"mqtt":{"host":"h"}"#

    func parse(_ section: String) throws(ConfigError) -> GatewayConfiguration {
        try GatewayConfiguration.parse(Data("{\(base),\"web\":\(section)}".utf8), baseDirectory: "/tmp")
    }

    func problems(_ section: String) -> [ConfigProblem] {
        do {
            _ = try parse(section)
            return []
        } catch {
            return error.problems
        }
    }

    func tokenFile(_ text: String) throws -> String {
        let path = NSTemporaryDirectory() + "gyrogate-web-token-\(UUID().uuidString)"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    func testOffUnlessConfigured() throws {
        XCTAssertNil(try GatewayConfiguration.parse(Data("{\(base)}".utf8), baseDirectory: "/tmp").web)
        XCTAssertNil(try parse("null").web)
    }

    func testLoopbackNeedsNoToken() throws {
        let web = try XCTUnwrap(try parse(#"{"listen":"127.0.0.1:8080"}"#).web)
        XCTAssertEqual(web.host, "127.0.0.1")
        XCTAssertEqual(web.port, 8080)
        XCTAssertNil(web.token)
        XCTAssertEqual(web.maxViewers, 4)
        XCTAssertEqual(web.pointsPerSecond, 25)
        XCTAssertEqual(try parse(#"{"listen":"[::1]:9000","maxViewers":2,"pointsPerSecond":10}"#).web?.host, "::1")
    }

    func testBeyondLoopbackATokenIsRequired() throws {
        let found = problems(#"{"listen":"0.0.0.0:8080"}"#)
        XCTAssertTrue(found.contains { $0.path == "web.tokenFile" && $0.message.contains("required") && $0.message.contains("SSH tunnel") }, "\(found)")
        let file = try tokenFile("a-long-enough-token-1234\n")
        let web = try XCTUnwrap(try parse(#"{"listen":"0.0.0.0:8080","tokenFile":"\#(file)"}"#).web)
        XCTAssertEqual(web.token?.value, "a-long-enough-token-1234")
        XCTAssertEqual("\(web.token!)", "<redacted>")
    }

    func testBadValuesNameThePath() throws {
        let short = try tokenFile("short")
        let cases: [(String, String, String)] = [
            (#"{"listen":"8080"}"#, "web.listen", "is not HOST:PORT"),
            (#"{"listen":"localhost:0"}"#, "web.listen", "is not HOST:PORT"),
            (#"{"listen":"localhost:70000"}"#, "web.listen", "is not HOST:PORT"),
            (#"{"listen":"::1:80"}"#, "web.listen", "is not HOST:PORT"),
            (#"{"listen":"127.0.0.1:8080","tokenFile":"/nonexistent/token"}"#, "web.tokenFile", "does not exist"),
            (#"{"listen":"127.0.0.1:8080","tokenFile":"\#(short)"}"#, "web.tokenFile", "at least 16"),
            (#"{"listen":"127.0.0.1:8080","maxViewers":0}"#, "web.maxViewers", ""),
            (#"{"listen":"127.0.0.1:8080","pointsPerSecond":1000}"#, "web.pointsPerSecond", ""),
            (#"{"listen":"127.0.0.1:8080","port":1}"#, "web.port", ""),
        ]
        for (section, path, fragment) in cases {
            let found = problems(section)
            XCTAssertTrue(found.contains { $0.path == path && (fragment.isEmpty || $0.message.contains(fragment)) },
                          "\(section): expected a problem at \(path) containing \"\(fragment)\", got \(found)")
        }
    }
}

extension WebSettingsTests {
    func testLoopbackIsAnAddressNotANamePrefix() {
        for host in ["127.0.0.1", "127.1.2.3", "localhost", "::1"] { XCTAssertTrue(WebSettings.isLoopback(host), host) }
        for host in ["127.example.com", "127.0.0.1.example.com", "0.0.0.0", "192.168.1.2", "", "127.0.0.256"] {
            XCTAssertFalse(WebSettings.isLoopback(host), host)
        }
    }
}
