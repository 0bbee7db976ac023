import Foundation
import MQTTPublisher
import TestSupport
import XCTest

/// Acceptance 5: broker errors are reported with the broker's reason, retries go on, nothing
/// is dropped from the outbox, and nothing crashes.
final class BrokerErrorTests: XCTestCase {
    func testWrongPasswordIsReportedAsNotAuthorizedAndRetried() async throws {
        try requireBroker()
        let directory = try TemporaryDirectory("mqtt-passwd")
        let passwords = directory.file("passwords")
        let tool = try ChildProcess("/usr/bin/mosquitto_passwd", ["-c", "-b", passwords, "gateway", "right-password"])
        XCTAssertEqual(tool.wait(timeout: 10), 0)
        let broker = try MosquittoBroker(extraLines: ["allow_anonymous false", "password_file \(passwords)"])
        try broker.start()
        let gateway = try Gateway(port: broker.port) {
            $0.username = "gateway"
            $0.password = "wrong-password"
        }
        try await assertReportedAndRetried(gateway, kind: .notAuthorized, messageContains: "authori")
        broker.stop()
    }

    func testUnreachableBrokerIsReportedAndRetried() async throws {
        let gateway = try Gateway(port: MosquittoBroker.freePort())
        try await assertReportedAndRetried(gateway, kind: .unreachable, messageContains: "refused")
    }

    func testTLSWithTheWrongCAIsReportedAndRetried() async throws {
        try requireBroker()
        let certs = try TemporaryDirectory("mqtt-tls")
        try makeCertificates(in: certs)
        let broker = try MosquittoBroker(extraLines: [
            "listener \(MosquittoBroker.freePort()) 127.0.0.1",
            "cafile \(certs.file("ca.pem"))", "certfile \(certs.file("server.pem"))", "keyfile \(certs.file("server.key"))",
        ])
        // The TLS listener is the second one: find its port in the config.
        try broker.start()
        let config = try String(contentsOfFile: broker.directory.file("mosquitto.conf"), encoding: .utf8)
        let tlsPort = Int(config.split(separator: "\n").filter { $0.hasPrefix("listener") }[1].split(separator: " ")[1])!
        let listening = await eventually(timeout: 5) { MosquittoBroker.canConnect(port: tlsPort) }
        XCTAssertTrue(listening)
        let gateway = try Gateway(port: tlsPort) { $0.tls = .init(caFile: certs.file("other-ca.pem")) }
        try await assertReportedAndRetried(gateway, kind: .tls, messageContains: "certificate verify failed")
        broker.stop()
    }

    private func assertReportedAndRetried(_ gateway: Gateway, kind: MQTTError.Kind, messageContains text: String,
                                          file: StaticString = #filePath, line: UInt = #line) async throws {
        gateway.start()
        try await gateway.session(device: "C4:BE:84:00:00:01", startMs: epochMs, samples: 120)
        let depth = await gateway.outboxDepth()
        XCTAssertGreaterThan(depth, 0, file: file, line: line)
        let retried = await eventually(timeout: 15) { await gateway.publisher.status.connectionFailures >= 3 }
        XCTAssertTrue(retried, file: file, line: line)
        let status = await gateway.publisher.status
        XCTAssertEqual(status.lastError?.kind, kind.rawValue, "\(String(describing: status.lastError))", file: file, line: line)
        XCTAssertTrue(status.lastError?.message.contains(text) ?? false, "\(String(describing: status.lastError))", file: file, line: line)
        XCTAssertNil(status.connectedSince, file: file, line: line)
        XCTAssertEqual(status.acknowledged, 0, file: file, line: line)
        let depthAfter = await gateway.outboxDepth()
        XCTAssertEqual(depthAfter, depth, "outbox rows are kept", file: file, line: line)
        await gateway.stop()
    }

    /// A CA with a server certificate for 127.0.0.1, and an unrelated second CA.
    private func makeCertificates(in directory: TemporaryDirectory) throws {
        func openssl(_ arguments: [String]) throws {
            let process = try ChildProcess("/usr/bin/openssl", arguments, outputFile: directory.file("openssl.log"))
            guard process.wait(timeout: 30) == 0 else { throw XCTSkip("openssl failed: \(arguments)") }
        }
        for ca in ["ca", "other-ca"] {
            try openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=\(ca)",
                         "-keyout", directory.file("\(ca).key"), "-out", directory.file("\(ca).pem")])
        }
        try openssl(["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
                     "-keyout", directory.file("server.key"), "-out", directory.file("server.csr")])
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: directory.file("san.ext"), atomically: true, encoding: .utf8)
        try openssl(["x509", "-req", "-in", directory.file("server.csr"), "-CA", directory.file("ca.pem"), "-CAkey", directory.file("ca.key"),
                     "-CAcreateserial", "-days", "2", "-extfile", directory.file("san.ext"), "-out", directory.file("server.pem")])
    }
}

