import XCTest

@testable import MetaWear

final class BoardResetSequenceTests: XCTestCase {
    private func withTearDownModules(_ responses: [String]) -> [String] {
        responses + ["09 80 00 00", "0a 80 00 00"]
    }

    func testMetaMotionR() {
        let board = Fixtures.board(withTearDownModules(Fixtures.metaMotionR), modelNumber: "5")
        XCTAssertBytes(
            BoardResetSequence.commands(for: board),
            [
                "13 01 00", "13 02 00 01", "13 05 00", "13 07 00",
                "03 01 00", "03 02 00 01", "03 04 00", "03 1c 00",
                "0b 01 00", "0a 05", "0b 0a", "09 08",
            ])
    }

    func testMetaMotionS() {
        let board = Fixtures.board(withTearDownModules(Fixtures.metaMotionS), modelNumber: "8")
        XCTAssertBytes(
            BoardResetSequence.commands(for: board),
            [
                "13 01 00", "13 02 00 01", "13 04 00", "13 05 00",
                "03 01 00", "03 02 00 01", "03 04 00", "03 05 00",
                "0b 01 00", "0a 05", "0b 0a", "09 08",
            ])
    }

    func testSkipsAbsentOrUnknownModules() {
        // BMI160 gyro rev 0 (no packed), unknown accelerometer implementation, no logging.
        let board = Fixtures.board(["13 80 00 00", "03 80 07 00", "0b 80", "09 80 00 00"], modelNumber: "5")
        XCTAssertBytes(BoardResetSequence.commands(for: board), ["13 01 00", "13 02 00 01", "13 05 00", "09 08"])
        XCTAssertEqual(BoardResetSequence.commands(for: BoardInfo()), [])
    }
}
