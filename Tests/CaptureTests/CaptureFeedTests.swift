import CaptureValues
import Capture
import GyroStore
import MetaWear
import XCTest

/// The feed between the data plane and the engine: runs grow per sensor stream while sensors
/// interleave, and what the engine takes keeps each sensor's order.
final class CaptureFeedTests: XCTestCase {
    let left = SensorIdentity(device: "AA:AA:AA:AA:AA:01", userId: "u")
    let right = SensorIdentity(device: "AA:AA:AA:AA:AA:02", userId: "u")

    private func append(_ feed: CaptureFeed, _ sensor: SensorIdentity, _ stream: SensorStream = .gyro,
                        first: Int64, count: Int = 1, gap: GapReason? = nil) {
        feed.append(sensor: sensor, stream: stream, odrHz: 100, range: 2000, firstIndex: first, gapReason: gap,
                    receivedAt: .now, count: count) { k in
            StoredSample(timestampMs: Double(first + Int64(k)) * 10, x: 0, y: 0, z: 0)
        }
    }

    private func runs(_ items: [CaptureFeed.Item]) -> [String] {
        items.map { item in
            switch item {
            case .samples(let run):
                "\(run.sensor.device.suffix(2)) \(run.stream.rawValue) \(run.firstIndex)+\(run.samples.count)"
                    + (run.gapReason.map { " \($0)" } ?? "")
            case .toggleSession(let sensor, _): "\(sensor.device.suffix(2)) toggle"
            }
        }
    }

    func testInterleavedSensorsEachGrowOneRun() {
        let feed = CaptureFeed()
        for n in 0..<50 {
            append(feed, left, first: Int64(n))
            append(feed, right, first: Int64(100 + n))
            append(feed, left, .accelerometer, first: Int64(n))
        }
        XCTAssertEqual(feed.pendingSamples, 150)
        let items = feed.take()
        XCTAssertEqual(runs(items), ["01 gyro 0+50", "02 gyro 100+50", "01 accelerometer 0+50"])
        guard case .samples(let run) = items[1] else { return XCTFail("not a run") }
        XCTAssertEqual(run.samples.map(\.timestampMs), (100..<150).map { Double($0) * 10 })
        XCTAssertEqual(feed.pendingSamples, 0)
        XCTAssertTrue(feed.take().isEmpty)
    }

    func testAGapOrAButtonPressStartsANewRun() {
        let feed = CaptureFeed()
        append(feed, left, first: 0, count: 3)
        append(feed, right, first: 0)
        append(feed, left, first: 3)
        feed.toggleSession(left, atMs: 40)
        append(feed, right, first: 1)
        append(feed, left, first: 4)
        append(feed, left, first: 9, gap: .notReceived)
        append(feed, left, first: 10)
        append(feed, right, first: 5)
        XCTAssertEqual(runs(feed.take()), [
            "01 gyro 0+4", "02 gyro 0+2", "01 toggle", "01 gyro 4+1", "01 gyro 9+2 notReceived", "02 gyro 5+1",
        ])
    }
}
