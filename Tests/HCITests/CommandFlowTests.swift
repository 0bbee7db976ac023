import HCI
import XCTest

/// A manual instant for tests: time moves only when the test says so.
struct FakeInstant: InstantProtocol {
    var offset: Duration
    func advanced(by duration: Duration) -> FakeInstant { FakeInstant(offset: offset + duration) }
    func duration(to other: FakeInstant) -> Duration { other.offset - offset }
    static func < (lhs: FakeInstant, rhs: FakeInstant) -> Bool { lhs.offset < rhs.offset }
}

final class CommandFlowTests: XCTestCase {
    let t0 = FakeInstant(offset: .zero)

    func complete(_ opcode: HCIOpcode, credits: UInt8 = 1, status: UInt8 = 0) -> HCIEvent {
        .commandComplete(CommandCompleteEvent(numHCICommandPackets: credits, commandOpcode: opcode, returnParameters: [status]))
    }

    func testFirstCommandIsSentOnTheInitialCredit() {
        var flow = CommandFlow<FakeInstant>()
        let (token, actions) = flow.enqueue(ResetCommand(), now: t0)
        XCTAssertEqual(actions, [.send(token, packet: [0x03, 0x0C, 0x00])])
        XCTAssertEqual(flow.credits, 0)
        XCTAssertEqual(flow.nextDeadline, t0.advanced(by: .seconds(2)))
    }

    func testSecondCommandWaitsForTheCreditInTheResponse() {
        var flow = CommandFlow<FakeInstant>()
        let (reset, _) = flow.enqueue(ResetCommand(), now: t0)
        let (read, queued) = flow.enqueue(LEReadBufferSizeCommand(), now: t0)
        XCTAssertEqual(queued, [])
        XCTAssertEqual(flow.waitingCount, 1)
        let actions = flow.receive(complete(.reset), now: t0)
        XCTAssertEqual(actions, [.complete(reset, .complete(CommandCompleteEvent(numHCICommandPackets: 1, commandOpcode: .reset,
                                                                                  returnParameters: [0]))),
                                 .send(read, packet: [0x02, 0x20, 0x00])])
        XCTAssertEqual(flow.pendingCount, 1)
    }

    func testCommandStatusResolvesAsyncCommands() {
        var flow = CommandFlow<FakeInstant>()
        let (token, _) = flow.enqueue(DisconnectCommand(connectionHandle: 0x40), now: t0)
        let status = CommandStatusEvent(status: .success, numHCICommandPackets: 1, commandOpcode: .disconnect)
        XCTAssertEqual(flow.receive(.commandStatus(status), now: t0), [.complete(token, .status(status))])
        XCTAssertEqual(CommandResponse.status(status).status, .success)
    }

    func testUnansweredCommandTimesOutAndReturnsItsCredit() {
        // bumble never answers an unknown opcode.
        var flow = CommandFlow<FakeInstant>()
        let unknown = HCIOpcode(rawValue: 0xFC01)
        let (lost, _) = flow.enqueue(opcode: unknown, packet: [0x01, 0xFC, 0x00], now: t0, timeout: .seconds(1))
        let (next, _) = flow.enqueue(ResetCommand(), now: t0)
        XCTAssertEqual(flow.expire(now: t0.advanced(by: .milliseconds(999))), [])
        let actions = flow.expire(now: t0.advanced(by: .seconds(1)))
        XCTAssertEqual(actions, [.fail(lost, .timedOut(opcode: unknown, after: .seconds(1))), .send(next, packet: [0x03, 0x0C, 0x00])])
        XCTAssertTrue("\(CommandFlowError.timedOut(opcode: unknown, after: .seconds(1)))".contains("0xfc01"))
        // The late answer matches nothing.
        XCTAssertEqual(flow.receive(complete(unknown, credits: 0), now: t0.advanced(by: .seconds(3))), [.unexpectedResponse(unknown)])
    }

    func testNoOperationOnlyGrantsCredits() {
        var flow = CommandFlow<FakeInstant>()
        _ = flow.enqueue(ResetCommand(), now: t0)
        let (second, _) = flow.enqueue(ReadBDADDRCommand(), now: t0)
        let nop = HCIEvent.commandComplete(CommandCompleteEvent(numHCICommandPackets: 1, commandOpcode: .noOperation, returnParameters: []))
        XCTAssertEqual(flow.receive(nop, now: t0), [.send(second, packet: [0x09, 0x10, 0x00])])
        XCTAssertEqual(flow.pendingCount, 2)
    }

    func testZeroCreditsHoldCommandsBack() {
        var flow = CommandFlow<FakeInstant>()
        let (first, _) = flow.enqueue(ResetCommand(), now: t0)
        _ = flow.enqueue(ReadBDADDRCommand(), now: t0)
        XCTAssertEqual(flow.receive(complete(.reset, credits: 0), now: t0).count, 1)
        XCTAssertEqual(flow.waitingCount, 1)
        _ = first
    }

    func testWaitingCommandCanBeWithdrawnButASentOneCannot() {
        var flow = CommandFlow<FakeInstant>()
        let (reset, _) = flow.enqueue(ResetCommand(), now: t0)
        _ = flow.receive(complete(.reset, credits: 0), now: t0)
        let (read, queued) = flow.enqueue(LEReadBufferSizeCommand(), now: t0)
        XCTAssertEqual(queued, [])
        XCTAssertTrue(flow.isWaiting(read))
        XCTAssertTrue(flow.withdraw(read))
        XCTAssertFalse(flow.isWaiting(read))
        XCTAssertEqual(flow.waitingCount, 0)
        XCTAssertEqual(flow.receive(complete(.noOperation, credits: 1), now: t0), [])
        XCTAssertFalse(flow.withdraw(reset))
    }

    func testTransportLossFailsEverything() {
        var flow = CommandFlow<FakeInstant>()
        let (a, _) = flow.enqueue(ResetCommand(), now: t0)
        let (b, _) = flow.enqueue(ReadBDADDRCommand(), now: t0)
        XCTAssertEqual(flow.transportLost(), [.fail(a, .transportLost(opcode: .reset)), .fail(b, .transportLost(opcode: .readBDADDR))])
        XCTAssertEqual(flow.credits, 1)
        XCTAssertNil(flow.nextDeadline)
    }

    func testOtherEventsAreIgnored() {
        var flow = CommandFlow<FakeInstant>()
        XCTAssertEqual(flow.receive(.unknown(code: .hardwareError, parameters: [0]), now: t0), [])
    }
}
