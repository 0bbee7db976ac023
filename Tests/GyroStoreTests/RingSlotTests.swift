@testable import GyroStore
import TestSupport
import XCTest

/// The sample ring's slot: what a commit's appends become and how a slot reads back.
final class RingSlotTests: XCTestCase {
    static let gyroUnits = 2000.0 / 32768

    /// Board counts scaled as the sensors layer scales them, 100 Hz from a fractional start.
    func samples(_ count: Int, from index: Int = 0, noisy: Bool = false) -> [StoredSample] {
        (index..<(index + count)).map { i in
            let noise = noisy ? Int(truncatingIfNeeded: UInt64(i) &* 0x9E37_79B9_7F4A_7C15 >> 50) : 0
            func axis(_ count: Int) -> Float { Float(Double(count) * Self.gyroUnits) }
            return StoredSample(timestampMs: 1_718_625_600_000.125 + Double(i) * 10.000_4, x: axis(i % 300), y: axis(-noise), z: axis(noise / 3))
        }
    }

    /// What a subscriber would read of `samples`: the chunk document's rounding.
    func rendered(_ samples: [StoredSample]) -> [ChunkBody.Point] { samples.map { ChunkBody.Point($0, backfilled: false) } }

    func testACommitRoundTripsThroughOneSlot() throws {
        let appends = [
            SampleAppend(chunkId: "u___1_gyro_0", offset: 0, samples: samples(100)[...], unitsPerLSB: Self.gyroUnits),
            SampleAppend(chunkId: "u___2_gyro_3", offset: 1_700, samples: samples(100, from: 1_700, noisy: true)[...], unitsPerLSB: Self.gyroUnits),
            SampleAppend(chunkId: "u___3_gyro_0", offset: 0, samples: [], unitsPerLSB: nil),
        ]
        let packed = try RingSlot.pack(appends)
        XCTAssertEqual(packed.count, 1)
        XCTAssertEqual(packed[0].chunkIds, ["u___1_gyro_0", "u___2_gyro_3"])
        XCTAssertLessThan(packed[0].payload.count, 200 * 9, "a few bytes a sample, the noisy axes included")
        let bytes = RingSlot.seal(packed[0].payload, sequence: 42)
        XCTAssertEqual(bytes.count, RingSlot.size)
        let slot = try XCTUnwrap(try RingSlot.decode(bytes))
        XCTAssertEqual(slot.sequence, 42)
        XCTAssertEqual(slot.batches.map(\.chunkId), ["u___1_gyro_0", "u___2_gyro_3"])
        XCTAssertEqual(slot.batches.map(\.offset), [0, 1_700])
        XCTAssertEqual(rendered(slot.batches[0].samples), rendered(samples(100)))
        XCTAssertEqual(rendered(slot.batches[1].samples), rendered(samples(100, from: 1_700, noisy: true)))
    }

    /// Values that are not board counts are kept as the documents write them.
    func testAxesThatAreNotCountsKeepTheirDocumentValue() throws {
        let odd = [StoredSample(timestampMs: 5.123_456, x: 1.234_567, y: -0.000_01, z: 2_000)]
        let packed = try RingSlot.pack([SampleAppend(chunkId: "c", offset: 3, samples: odd[...], unitsPerLSB: Self.gyroUnits)])
        let slot = try XCTUnwrap(try RingSlot.decode(RingSlot.seal(packed[0].payload, sequence: 1)))
        XCTAssertEqual(rendered(slot.batches[0].samples), rendered(odd))
    }

    /// A commit larger than a slot fills several; a batch split between them continues at the
    /// right offset.
    func testALargeCommitSplitsAcrossSlots() throws {
        let many = samples(3_000, noisy: true)
        let packed = try RingSlot.pack([
            SampleAppend(chunkId: "a", offset: 10, samples: many[...], unitsPerLSB: nil),
            SampleAppend(chunkId: "b", offset: 0, samples: many[..<50], unitsPerLSB: Self.gyroUnits),
        ])
        XCTAssertGreaterThan(packed.count, 2)
        var joined: [String: [StoredSample]] = [:]
        var offsets: [String: Int] = [:]
        for (index, entry) in packed.enumerated() {
            XCTAssertLessThanOrEqual(entry.payload.count, RingSlot.payloadRoom)
            let slot = try XCTUnwrap(try RingSlot.decode(RingSlot.seal(entry.payload, sequence: 7)))
            for batch in slot.batches {
                XCTAssertEqual(batch.offset, offsets[batch.chunkId] ?? (batch.chunkId == "a" ? 10 : 0), "slot \(index)")
                joined[batch.chunkId, default: []] += batch.samples
                offsets[batch.chunkId] = batch.offset + batch.samples.count
            }
        }
        XCTAssertEqual(rendered(joined["a"] ?? []), rendered(many))
        XCTAssertEqual(rendered(joined["b"] ?? []), rendered(Array(many[..<50])))
    }

    func testASlotNeverWrittenIsEmptyAndADamagedOneIsAnError() throws {
        XCTAssertNil(try RingSlot.decode([UInt8](repeating: 0, count: RingSlot.size)))
        let packed = try RingSlot.pack([SampleAppend(chunkId: "c", offset: 0, samples: samples(10)[...], unitsPerLSB: Self.gyroUnits)])
        var bytes = RingSlot.seal(packed[0].payload, sequence: 9)
        bytes[RingSlot.headerSize + 5] ^= 0x40
        XCTAssertThrowsError(try RingSlot.decode(bytes)) { error in
            XCTAssertTrue("\(error)".contains("checksum mismatch at sequence 9"), "\(error)")
        }
        XCTAssertThrowsError(try RingSlot.decode([7] + bytes.dropFirst()))
        XCTAssertThrowsError(try RingSlot.decode([1, 2, 3]))
    }

    /// Whatever the bytes, decoding returns or throws: it never traps.
    func testArbitraryBytesNeverTrap() throws {
        let packed = try RingSlot.pack([SampleAppend(chunkId: "c", offset: 0, samples: samples(40, noisy: true)[...], unitsPerLSB: nil)])
        let good = RingSlot.seal(packed[0].payload, sequence: 3)
        var generator = SplitMix64.fresh("testArbitraryBytesNeverTrap")
        for _ in 0..<2_000 {
            var bytes = good
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            // A corrupted slot whose checksum still matches must decode structurally or throw.
            let payloadLength = Int(RingSlot.readLE(UInt16.self, bytes, at: 9))
            if payloadLength <= bytes.count - RingSlot.headerSize {
                let checksum = RingSlot.checksum(3, bytes[RingSlot.headerSize..<(RingSlot.headerSize + payloadLength)])
                withUnsafeBytes(of: checksum.littleEndian) { bytes.replaceSubrange(11..<15, with: $0) }
            }
            _ = try? RingSlot.decode(bytes)
            _ = try? RingSlot.decode(Array(bytes.prefix(Int.random(in: 0..<64, using: &generator))))
        }
    }
}
