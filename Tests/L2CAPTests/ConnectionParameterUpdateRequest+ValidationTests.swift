import L2CAP
import XCTest

final class ConnectionParameterUpdateRequestValidationTests: XCTestCase {
    func request(_ min: UInt16, _ max: UInt16, _ latency: UInt16, _ timeout: UInt16) -> ConnectionParameterUpdateRequest {
        ConnectionParameterUpdateRequest(identifier: 1, intervalMin: min, intervalMax: max, latency: latency, timeout: timeout)
    }

    func testAcceptsTypicalMetaWearRequest() {
        // 7.5-15 ms, no latency, 5 s timeout.
        XCTAssertEqual(request(6, 12, 0, 500).validate(), .accept)
        XCTAssertEqual(request(6, 12, 0, 500).validate().result, .accepted)
        XCTAssertEqual(request(3200, 3200, 0, 3200).validate(), .accept)
    }

    func testRejectsIntervalsOutOfRange() {
        XCTAssertEqual(request(5, 12, 0, 500).validate(), .reject(.intervalOutOfRange(min: 5, max: 12)))
        XCTAssertEqual(request(6, 3201, 0, 3200).validate(), .reject(.intervalOutOfRange(min: 6, max: 3201)))
        XCTAssertEqual(request(12, 6, 0, 500).validate(), .reject(.intervalMinAboveMax(min: 12, max: 6)))
    }

    func testRejectsLatencyAndTimeoutOutOfRange() {
        XCTAssertEqual(request(6, 6, 500, 3200).validate(), .reject(.latencyTooHigh(500)))
        XCTAssertEqual(request(6, 6, 0, 9).validate(), .reject(.timeoutOutOfRange(9)))
        XCTAssertEqual(request(6, 6, 0, 3201).validate(), .reject(.timeoutOutOfRange(3201)))
    }

    func testTimeoutMustExceedTwiceTheEffectiveInterval() {
        // (1 + 4) x 40 x 1.25 ms x 2 = 500 ms: a timeout of exactly 500 ms is not enough.
        XCTAssertEqual(request(40, 40, 4, 50).validate(),
                       .reject(.timeoutTooShortForLatency(timeout: 50, latency: 4, intervalMax: 40)))
        XCTAssertEqual(request(40, 40, 4, 51).validate(), .accept)
        XCTAssertEqual(request(3200, 3200, 499, 3200).validate().result, .rejected)
    }

    func testViolationDescriptionsGiveTheRule() {
        let text = ConnectionParameterViolation.timeoutTooShortForLatency(timeout: 50, latency: 4, intervalMax: 40).description
        XCTAssertTrue(text.contains("500 ms"), text)
    }
}
