import Capture
import GyroStore
import XCTest

/// The live view's tap on the capture feed: a bounded number of points per second whatever the
/// output data rate, gaps marked, history bounded, and a reader gets only what is newer.
final class LiveTapTests: XCTestCase {
    let sensor = SensorIdentity(device: "AA:AA:AA:AA:AA:01", userId: "u")

    /// `seconds` of a stream at `odrHz`, `perNotification` samples a notification.
    private func stream(_ feed: CaptureFeed, odrHz: Double, seconds: Double, perNotification: Int = 1, from first: Int64 = 0,
                        gapAt: Int64? = nil, stream kind: SensorStream = .gyro) {
        var index = first
        let end = first + Int64(odrHz * seconds)
        while index < end {
            let start = index
            feed.append(sensor: sensor, stream: kind, odrHz: odrHz, range: 2000, firstIndex: start, gapReason: start == gapAt ? .notReceived : nil,
                        receivedAt: .now, count: perNotification) { k in
                StoredSample(timestampMs: Double(start + Int64(k)) * 1000 / odrHz, x: Float(start), y: 0, z: 0)
            }
            index += Int64(perNotification)
        }
    }

    func testPointsPerSecondAreBoundedWhateverTheRate() {
        for (odr, perNotification) in [(25.0, 1), (100.0, 1), (800.0, 1), (800.0, 8), (3200.0, 16)] {
            let feed = CaptureFeed(), tap = LiveTap(pointsPerSecond: 20)
            feed.setLiveTap(tap)
            stream(feed, odrHz: odr, seconds: 5, perNotification: perNotification)
            let count = tap.points(after: 0).points.count
            XCTAssertLessThanOrEqual(count, 5 * min(20, Int(odr)) + 1, "\(odr) Hz, \(perNotification) per notification")
            XCTAssertGreaterThanOrEqual(count, 5 * min(20, Int(odr)) * 8 / 10, "\(odr) Hz, \(perNotification) per notification")
        }
    }

    func testWithoutATapNothingIsKeptAndOnlyGyroIsTapped() {
        let feed = CaptureFeed(), tap = LiveTap(pointsPerSecond: 10)
        stream(feed, odrHz: 100, seconds: 1)
        feed.setLiveTap(tap)
        stream(feed, odrHz: 100, seconds: 1, from: 1000, stream: .accelerometer)
        XCTAssertEqual(tap.points(after: 0).points.count, 0)
    }

    func testHistoryIsBoundedAndReadersGetOnlyWhatIsNewer() {
        let feed = CaptureFeed(), tap = LiveTap(pointsPerSecond: 10, seconds: 12)
        feed.setLiveTap(tap)
        stream(feed, odrHz: 100, seconds: 60)
        let (points, last) = tap.points(after: 0)
        XCTAssertEqual(points.count, tap.capacity)
        XCTAssertEqual(points.last?.sequence, last)
        XCTAssertEqual(points.map(\.sequence), points.map(\.sequence).sorted())
        XCTAssertGreaterThan(points.first!.timestampMs, 47_000, "the oldest points were overwritten")
        stream(feed, odrHz: 100, seconds: 1, from: 6000)
        let newer = tap.points(after: last).points
        XCTAssertEqual(newer.count, 10)
        XCTAssertTrue(newer.allSatisfy { $0.sequence > last })
    }

    func testAGapMarksTheNextPointEvenWhenItsNotificationIsNotTapped() {
        let feed = CaptureFeed(), tap = LiveTap(pointsPerSecond: 10)
        feed.setLiveTap(tap)
        stream(feed, odrHz: 100, seconds: 1)
        // Samples 100..149 never arrived; the stream resumes at 150 with a gap before it.
        stream(feed, odrHz: 100, seconds: 1, from: 150, gapAt: 150)
        let points = tap.points(after: 0).points
        XCTAssertEqual(points.filter(\.gap).count, 1)
        XCTAssertEqual(points.first(where: \.gap)?.timestampMs, 1500)
    }
}
