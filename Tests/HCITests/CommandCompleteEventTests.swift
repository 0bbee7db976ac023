import BluetoothWire
import HCI
import WireTestSupport
import XCTest

final class CommandCompleteEventTests: XCTestCase {
    /// A vector that decodes to another event is a failure of the test, not a reason to skip it.
    struct NotACommandComplete: Error, CustomStringConvertible {
        var description: String
    }

    func completeEvent(_ vector: String) throws -> CommandCompleteEvent {
        let decoded = try HCIEvent(decoding: hex(vector))
        guard case let .commandComplete(event) = decoded else {
            throw NotACommandComplete(description: "\(vector) decoded as \(decoded), not a Command Complete")
        }
        return event
    }

    func testResetReturnsStatus() throws {
        let event = try completeEvent("0e 04 01 03 0c 00")
        XCTAssertEqual(event.numHCICommandPackets, 1)
        XCTAssertEqual(event.commandOpcode, .reset)
        XCTAssertEqual(try event.returnParameters(for: ResetCommand.self), StatusReturnParameters(status: .success))
    }

    func testLEReadBufferSizeReturnsTwentySevenByteBuffers() throws {
        let event = try completeEvent("0e 07 01 02 20 00 1b 00 10")
        let result = try event.returnParameters(for: LEReadBufferSizeCommand.self)
        XCTAssertEqual(result.leACLDataPacketLength, 27)
        XCTAssertEqual(result.totalNumLEACLDataPackets, 16)
        var writer = ByteWriter()
        result.write(to: &writer)
        XCTAssertEqual(writer.bytes, event.returnParameters)
    }

    func testReadBufferSize() throws {
        let event = try completeEvent("0e 0b 01 05 10 00 fd 03 40 08 00 01 00")
        let result = try event.returnParameters(for: ReadBufferSizeCommand.self)
        XCTAssertEqual(result, ReadBufferSizeReturnParameters(status: .success, aclDataPacketLength: 1021,
                                                              synchronousDataPacketLength: 64, totalNumACLDataPackets: 8,
                                                              totalNumSynchronousDataPackets: 1))
    }

    func testReadBDADDR() throws {
        let event = try completeEvent("0e 0a 01 09 10 00 f6 05 04 03 02 c1")
        XCTAssertEqual(try event.returnParameters(for: ReadBDADDRCommand.self).bdAddr.description, "C1:02:03:04:05:F6")
    }

    func testRemoteConnectionParameterReplyReturnsHandle() throws {
        let event = try completeEvent("0e 06 01 20 20 00 40 00")
        XCTAssertEqual(try event.returnParameters(for: LERemoteConnectionParameterRequestReplyCommand.self).connectionHandle, 0x40)
    }

    func testFailedStatusIsReportedWithOpcode() throws {
        let event = try completeEvent("0e 04 01 02 20 01")
        XCTAssertThrowsError(try event.returnParameters(for: LEReadBufferSizeCommand.self)) { error in
            XCTAssertEqual(error as? HCICommandError, .commandFailed(opcode: .leReadBufferSize, status: .unknownHCICommand))
            XCTAssertTrue("\(error)".contains("leReadBufferSize"))
        }
    }

    func testOpcodeMismatchAndMalformedReturnParameters() throws {
        let reset = try completeEvent("0e 04 01 03 0c 00")
        XCTAssertThrowsError(try reset.returnParameters(for: ReadBDADDRCommand.self)) { error in
            XCTAssertEqual(error as? HCICommandError, .opcodeMismatch(expected: .readBDADDR, received: .reset))
        }
        let short = try completeEvent("0e 06 01 09 10 00 f6 05")
        XCTAssertThrowsError(try short.returnParameters(for: ReadBDADDRCommand.self)) { error in
            guard case .malformedReturnParameters(.readBDADDR, _) = error as? HCICommandError else {
                return XCTFail("\(error)")
            }
        }
        let nop = try completeEvent("0e 03 01 00 00")
        XCTAssertNil(nop.status)
    }

    func testEveryTruncationOfReturnParametersIsRejected() throws {
        func truncations<C: HCICommand>(_ command: C.Type, _ returnParameters: String) {
            let bytes = hex(returnParameters)
            for length in 0..<bytes.count {
                let event = CommandCompleteEvent(numHCICommandPackets: 1, commandOpcode: C.opcode,
                                                 returnParameters: Array(bytes.prefix(length)))
                XCTAssertThrowsError(try event.returnParameters(for: C.self), "\(C.self) prefix \(length)")
            }
            let whole = CommandCompleteEvent(numHCICommandPackets: 1, commandOpcode: C.opcode, returnParameters: bytes)
            XCTAssertNoThrow(try whole.returnParameters(for: C.self))
        }
        truncations(ResetCommand.self, "00")
        truncations(LEReadBufferSizeCommand.self, "00 1b 00 10")
        truncations(ReadBufferSizeCommand.self, "00 fd 03 40 08 00 01 00")
        truncations(ReadBDADDRCommand.self, "00 f6 05 04 03 02 c1")
        truncations(LERemoteConnectionParameterRequestNegativeReplyCommand.self, "00 40 00")
    }
}
