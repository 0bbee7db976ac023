@testable import Doctor
import BLEHost
import Foundation
import GatewayConfig
import TestSupport
import XCTest

/// `gyrogate doctor` against real problems: one seeded problem per test, a real mosquitto
/// broker, a listening TCP socket for the H4 transport.
final class DoctorTests: XCTestCase {
    static let allChecks = ["config", "transport", "capabilities", "broker", "publish", "data directory", "disk space", "flash wear", "admin socket", "clock"]

    func testEverythingPassesWithAReachableTransportAndBroker() async throws {
        try requireBroker()
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let fixture = try DoctorFixture(brokerPort: broker.port)
        let report = try await fixture.run()
        XCTAssertEqual(report.results.map(\.check), Self.allChecks, report.lines.joined(separator: "\n"))
        assertOthersPass(report, except: [])
        XCTAssertTrue(report.passed)
        XCTAssertEqual(report.exitCode, 0)
        XCTAssertTrue(report.lines.contains("ok   publish: PUBACK for site1/gyrogate/doctor-test/doctor (QoS 1, not retained)"), report.lines.joined(separator: "\n"))
        XCTAssertTrue(report.results(for: "broker").first?.line.contains("MQTT 5") ?? false)
        XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.directory.file("data")), "the doctor creates nothing for the gateway")
    }

    func testNoBrokerIsReportedAsUnreachable() async throws {
        let fixture = try DoctorFixture(brokerPort: MosquittoBroker.freePort())
        let report = try await fixture.run()
        assertOthersPass(report, except: ["broker"])
        let broker = try XCTUnwrap(report.results(for: "broker").first)
        guard case .brokerUnreachable(let address, let reason)? = broker.problem else { return XCTFail(broker.line) }
        XCTAssertTrue(address.hasPrefix("127.0.0.1:"))
        XCTAssertTrue(reason.contains("refused"), reason)
        XCTAssertTrue(report.results(for: "publish").isEmpty, "no publish is tried without a connection")
        XCTAssertEqual(report.exitCode, 1)
    }

    /// `mqtt.hosts`: every broker is probed; a fallback that is down is reported before it is needed.
    func testEveryBrokerOfTheListIsProbed() async throws {
        try requireBroker()
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let fixture = try DoctorFixture(brokerPort: broker.port)
        fixture.config["mqtt"] = ["hosts": ["127.0.0.1:\(broker.port)", "127.0.0.1:\(MosquittoBroker.freePort())"], "topicPrefix": "site1/"]
        let report = try await fixture.run()
        assertOthersPass(report, except: ["broker 2"])
        XCTAssertTrue(report.results(for: "publish").first?.line.contains("PUBACK") ?? false, report.lines.joined(separator: "\n"))
        let second = try XCTUnwrap(report.results(for: "broker 2").first, report.lines.joined(separator: "\n"))
        guard case .brokerUnreachable(let address, _)? = second.problem else { return XCTFail(second.line) }
        XCTAssertFalse(address.hasSuffix(":\(broker.port)"))
        XCTAssertEqual(report.exitCode, 1)
    }

    func testAWrongPasswordIsReportedAsRejectedCredentials() async throws {
        try requireBroker()
        let secrets = try TemporaryDirectory("doctor-passwd")
        let passwords = secrets.file("passwords")
        let tool = try ChildProcess("/usr/bin/mosquitto_passwd", ["-b", "-c", passwords, "gateway", "right-password"])
        XCTAssertEqual(tool.wait(timeout: 10), 0)
        let broker = try MosquittoBroker(extraLines: ["allow_anonymous false", "password_file \(passwords)"])
        try broker.start()
        defer { broker.stop() }
        let fixture = try DoctorFixture(brokerPort: broker.port)
        try "wrong-password\n".write(toFile: secrets.file("mqtt-password"), atomically: true, encoding: .utf8)
        fixture.set("mqtt", "username", "gateway")
        fixture.set("mqtt", "passwordFile", secrets.file("mqtt-password"))
        let report = try await fixture.run()
        assertOthersPass(report, except: ["broker"])
        let result = try XCTUnwrap(report.results(for: "broker").first)
        guard case .brokerCredentialsRejected(_, let username, _)? = result.problem else { return XCTFail(result.line) }
        XCTAssertEqual(username, "gateway")
        XCTAssertTrue(result.line.contains("mqtt.username"), result.line)
        XCTAssertEqual(report.exitCode, 1)

        // The right password passes, so it was the password.
        try "right-password\n".write(toFile: secrets.file("mqtt-password"), atomically: true, encoding: .utf8)
        let fixed = try await fixture.run()
        assertOthersPass(fixed, except: [])
        XCTAssertEqual(fixed.exitCode, 0)
    }

    func testAnACLRefusalOfThePrefixIsNamed() async throws {
        try requireBroker()
        let acl = try TemporaryDirectory("doctor-acl")
        // Anonymous clients may read everything and write only under other/.
        try "topic read #\ntopic write other/#\n".write(toFile: acl.file("acl"), atomically: true, encoding: .utf8)
        let broker = try MosquittoBroker(extraLines: ["acl_file \(acl.file("acl"))"])
        try broker.start()
        defer { broker.stop() }
        let fixture = try DoctorFixture(brokerPort: broker.port)
        let report = try await fixture.run()
        assertOthersPass(report, except: ["publish"])
        XCTAssertEqual(report.results(for: "broker").first?.status, .ok)
        let publish = try XCTUnwrap(report.results(for: "publish").first)
        guard case .publishNotAuthorized(let topic, let prefix, nil)? = publish.problem else { return XCTFail(publish.line) }
        XCTAssertEqual(topic, "site1/gyrogate/doctor-test/doctor")
        XCTAssertEqual(prefix, "site1/")
        XCTAssertEqual(publish.status, .fail)
        XCTAssertTrue(publish.line.contains("PUBACK 135"), publish.line)
        XCTAssertTrue(publish.line.contains("topic write site1/#"), publish.line)
        XCTAssertEqual(report.exitCode, 1)
    }

    func testADataDirectoryThatCannotBeCreatedFails() async throws {
        // Root ignores file modes: a directory under a regular file fails for root too (ENOTDIR).
        let fixture = try DoctorFixture(brokerPort: MosquittoBroker.freePort())
        try "not a folder".write(toFile: fixture.directory.file("file"), atomically: true, encoding: .utf8)
        fixture.set(nil, "dataDirectory", fixture.directory.file("file/data"))
        let report = try await fixture.run()
        let data = try XCTUnwrap(report.results(for: "data directory").first)
        guard case .dataDirectoryCannotBeCreated(let path, let reason)? = data.problem else { return XCTFail(data.line) }
        XCTAssertEqual(path, fixture.directory.file("file/data"))
        XCTAssertTrue(reason.contains("not a directory"), reason)
        XCTAssertTrue(report.results(for: "disk space").isEmpty)
        assertOthersPass(report, except: ["data directory", "broker"])
        XCTAssertEqual(report.exitCode, 1)

        // A regular file where the directory should be.
        fixture.set(nil, "dataDirectory", fixture.directory.file("file"))
        let second = try await fixture.run()
        XCTAssertEqual(second.results(for: "data directory").first?.problem, .dataDirectoryNotADirectory(path: fixture.directory.file("file")))
    }

    func testAnUnreachableTCPTransportFails() async throws {
        let fixture = try DoctorFixture(brokerPort: MosquittoBroker.freePort())
        let port = MosquittoBroker.freePort()
        fixture.set("bluetooth", "transport", "tcp:127.0.0.1:\(port)")
        let report = try await fixture.run()
        let transport = try XCTUnwrap(report.results(for: "transport").first)
        guard case .transportUnreachable(let spec, let reason)? = transport.problem else { return XCTFail(transport.line) }
        XCTAssertEqual(spec, "tcp:127.0.0.1:\(port)")
        XCTAssertTrue(reason.contains("Connection refused"), reason)
        XCTAssertTrue(transport.line.contains("fix: start the controller or emulator that should listen on 127.0.0.1:\(port)"), transport.line)
        assertOthersPass(report, except: ["transport", "broker"])
        XCTAssertEqual(report.exitCode, 1)
    }

    func testInvalidJSONIsOneFailedCheck() async throws {
        let fixture = try DoctorFixture(brokerPort: MosquittoBroker.freePort())
        let path = fixture.directory.file("broken.json")
        try #"{"gatewayId": "doctor-test", "bluetooth": {"transport": "hci:0"},"#.write(toFile: path, atomically: true, encoding: .utf8)
        let report = await fixture.run(path: path)
        XCTAssertEqual(report.results.map(\.check), ["config", "clock"], report.lines.joined(separator: "\n"))
        guard case .configNotJSON(let named, _)? = report.results[0].problem else { return XCTFail(report.results[0].line) }
        XCTAssertEqual(named, path)
        XCTAssertEqual(report.results[1].status, .ok)
        XCTAssertEqual(report.exitCode, 1)

        let missing = await fixture.run(path: fixture.directory.file("absent.json"))
        guard case .configUnreadable? = missing.results.first?.problem else { return XCTFail(missing.lines.joined(separator: "\n")) }
    }

    func testABadValueIsNamedByItsKey() async throws {
        let fixture = try DoctorFixture(brokerPort: MosquittoBroker.freePort())
        fixture.set(nil, "gyro", ["odrHz": 30])
        let report = try await fixture.run()
        XCTAssertEqual(report.results.map(\.check), ["config", "clock"])
        let config = report.results[0]
        guard case .configInvalid(_, let problems)? = config.problem else { return XCTFail(config.line) }
        XCTAssertEqual(problems.map(\.path), ["gyro.odrHz"])
        XCTAssertTrue(config.line.hasPrefix("FAIL config: "), config.line)
        XCTAssertTrue(config.line.contains("gyro.odrHz: 30 Hz is not supported"), config.line)
        XCTAssertTrue(config.line.contains("fix: edit "), config.line)
        XCTAssertEqual(report.exitCode, 1)
    }

    func testAClockBefore2024Fails() async throws {
        let fixture = try DoctorFixture(brokerPort: MosquittoBroker.freePort())
        let report = try await fixture.run(now: { Date(timeIntervalSince1970: 12) })
        let clock = try XCTUnwrap(report.results(for: "clock").first)
        XCTAssertEqual(clock.problem, .clockImplausible(now: Date(timeIntervalSince1970: 12)))
        XCTAssertTrue(clock.line.contains("1970-01-01"), clock.line)
    }

    func testAnUnsynchronisedClockWarnsAndNamesTheFix() async throws {
        let fixture = try DoctorFixture(brokerPort: MosquittoBroker.freePort())
        let report = try await fixture.run(synchronised: false)
        let clock = try XCTUnwrap(report.results(for: "clock").first)
        guard case .clockUnsynchronised? = clock.problem else { return XCTFail(clock.line) }
        XCTAssertEqual(clock.status, .warn)
        XCTAssertTrue(clock.line.contains("STA_UNSYNC"), clock.line)
        XCTAssertTrue(clock.line.contains("timedatectl set-ntp true"), clock.line)
        XCTAssertTrue(clock.line.contains("clock of a board"), clock.line)
        let synchronised = try await fixture.run(synchronised: true)
        XCTAssertEqual(synchronised.results(for: "clock").first?.status, .ok)
    }

    func testAnUnknownAdminGroupFails() async throws {
        let fixture = try DoctorFixture(brokerPort: MosquittoBroker.freePort())
        fixture.set("admin", "group", "no-such-group-gyrogate")
        let report = try await fixture.run()
        XCTAssertEqual(report.results(for: "admin socket").first?.problem, .adminGroupUnknown(key: "admin.group", group: "no-such-group-gyrogate"))
        assertOthersPass(report, except: ["admin socket", "broker"])
    }

    func testAnHCITransportNeedsNetAdminAndNetRaw() async throws {
        let fixture = try DoctorFixture(brokerPort: MosquittoBroker.freePort())
        fixture.set("bluetooth", "transport", "hci:0")
        let status = fixture.directory.file("status")
        try "Name:\tgyrogate\nCapInh:\t0000000000000000\nCapEff:\t0000000000000000\n".write(toFile: status, atomically: true, encoding: .utf8)
        let report = try await fixture.run(processStatusPath: status)
        XCTAssertEqual(report.results(for: "capabilities").first?.problem, .capabilitiesMissing(adapter: 0, missing: ["CAP_NET_ADMIN", "CAP_NET_RAW"]))
        if !TransportCheck.presentAdapters().contains("hci0") {
            XCTAssertEqual(report.results(for: "transport").first?.status, .fail, "no hci0 here")
        }
        try "CapEff:\t000001ffffffffff\n".write(toFile: status, atomically: true, encoding: .utf8)
        let privileged = try await fixture.run(processStatusPath: status)
        XCTAssertEqual(privileged.results(for: "capabilities").first?.status, .ok)
    }

    /// EAFNOSUPPORT (97), as on this VM, and the other user-channel errnos map to named problems.
    func testUserChannelErrorsAreNamed() {
        func problem(_ code: Int32) -> DoctorProblem {
            TransportCheck.problem(for: TransportError(kind: .systemCall, transport: "hci:0", operation: code == EAFNOSUPPORT ? "socket" : "bind", errorNumber: code),
                                   transport: .userChannel(adapter: 0))
        }
        XCTAssertEqual(problem(EAFNOSUPPORT), .bluetoothUnsupported(adapter: 0))
        XCTAssertTrue(problem(EAFNOSUPPORT).problem.contains("EAFNOSUPPORT, errno 97"))
        XCTAssertTrue(problem(EAFNOSUPPORT).fix.contains("tcp:HOST:PORT"))
        if case .adapterMissing(0, _) = problem(ENODEV) {} else { XCTFail("\(problem(ENODEV))") }
        if case .adapterBusy(0, _) = problem(EBUSY) {} else { XCTFail("\(problem(EBUSY))") }
        XCTAssertEqual(problem(EUSERS), .adapterTaken(adapter: 0))
        XCTAssertEqual(problem(EALREADY), .adapterTaken(adapter: 0))
        XCTAssertEqual(problem(EPERM), .adapterPermissionDenied(adapter: 0))
    }

    func testAdminModesThatLockPeopleOutAreWarnings() {
        func problems(_ mode: Int, group: String? = nil, allowedGroups: [String] = []) -> [DoctorProblem] {
            AdminSocketCheck.modeProblems(mode: mode, group: group, allowedUids: [], allowedGroups: allowedGroups)
        }
        XCTAssertEqual(problems(0o600, group: "staff"), [.adminGroupWithoutAccess(group: "staff", mode: 0o600)])
        XCTAssertEqual(problems(0o660, allowedGroups: ["operators"]), [.adminAllowedGroupsLockedOut(groups: ["operators"], mode: 0o660)])
        XCTAssertEqual(problems(0o666), [.adminOpenToEveryone(mode: 0o666)])
        XCTAssertEqual(problems(0o060), [.adminOwnerCannotConnect(mode: 0o060)])
        XCTAssertTrue(problems(0o660).isEmpty)
        XCTAssertTrue(problems(0o660, group: "operators", allowedGroups: ["operators"]).isEmpty)
        XCTAssertEqual(DoctorProblem.adminOpenToEveryone(mode: 0o666).severity, .warn)
        XCTAssertTrue(CheckResult.problem("admin socket", .adminOpenToEveryone(mode: 0o666)).line.hasPrefix("warn admin socket: admin.mode 0666 "))
    }
}
