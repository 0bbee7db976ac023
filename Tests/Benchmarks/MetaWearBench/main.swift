// metawear-bench: throughput of the streaming decode path.
//
//   swift run -c release metawear-bench [notifications] [rounds]
//
// Decodes a large array of gyro notification payloads (BMI160 layout) into scaled, timestamped
// samples through MetaWearPacketParser → SampleDecoder → SampleClock, and compares with a
// baseline measured in the same run: a plain loop that reads the int16s at fixed offsets and
// multiplies them by a constant. The headline mix is 3 packed : 1 unpacked notifications; packed-only
// and unpacked-only runs follow. Each figure is the best of `rounds`, timed with ContinuousClock.

import MetaWear

struct Generator {
    var state: UInt64 = 0x1234_5678
    mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state >> 16
    }
}

struct Workload {
    var payloads: [[UInt8]] = []
    var arrivals: [Double] = []
    var sampleCount = 0

    /// `packedEvery`: a notification is packed unless `n % packedEvery == packedEvery - 1`;
    /// 0 means all unpacked, 1 all packed.
    init(notifications: Int, packedEvery: Int, rate: Double) {
        var generator = Generator()
        payloads.reserveCapacity(notifications)
        arrivals.reserveCapacity(notifications)
        var now = 1_000.0
        for n in 0..<notifications {
            let packed = packedEvery == 1 || (packedEvery > 1 && n % packedEvery != packedEvery - 1)
            var bytes: [UInt8] = [0x13, packed ? 0x07 : 0x05]
            for _ in 0..<(packed ? 18 : 6) { bytes.append(UInt8(truncatingIfNeeded: generator.next())) }
            payloads.append(bytes)
            let samples = packed ? 3 : 1
            sampleCount += samples
            now += Double(samples) / rate + Double(generator.next() % 1000) * 1e-6
            arrivals.append(now)
        }
    }
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
}

/// Full path; returns (best seconds, checksum of scaled values).
func runFull(_ work: Workload, rounds: Int, rate: Double) -> (Double, Double) {
    let parser = MetaWearPacketParser(gyroRegisters: .bmi160)
    let decoder = SampleDecoder(gyroRange: .dps1000)
    let clock = ContinuousClock()
    var output: [TimestampedSample] = []
    output.reserveCapacity(work.sampleCount)
    var best = Double.infinity
    var errors = 0
    for _ in 0..<rounds {
        output.removeAll(keepingCapacity: true)
        var sampleClock = SampleClock(nominalRate: rate)
        let elapsed = clock.measure {
            for i in 0..<work.payloads.count {
                do {
                    switch try parser.parse(work.payloads[i]) {
                    case .gyroData(let samples), .gyroPacked(let samples):
                        let timing = sampleClock.timestamp(sampleCount: samples.count, arrivalTime: work.arrivals[i])
                        decoder.decode(samples, timing: timing, into: &output)
                    default:
                        break
                    }
                } catch {
                    errors += 1
                }
            }
        }
        best = min(best, seconds(elapsed))
    }
    precondition(output.count == work.sampleCount && errors == 0, "decode path lost samples")
    precondition(
        zip(output, output.dropFirst()).allSatisfy { $0.time < $1.time && $0.index + 1 == $1.index },
        "stamps out of order")
    return (best, output.reduce(0) { $0 + $1.x + $1.y + $1.z })
}

/// Baseline: int16 at fixed offsets × constant; returns (best seconds, checksum).
func runBaseline(_ work: Workload, rounds: Int) -> (Double, Double) {
    let clock = ContinuousClock()
    let scale = 1 / 32.8
    var best = Double.infinity
    var checksum = 0.0
    for _ in 0..<rounds {
        var sum = 0.0
        var samples = 0
        let elapsed = clock.measure {
            for payload in work.payloads {
                var offset = 2
                while offset + 6 <= payload.count {
                    let x = Int16(bitPattern: UInt16(payload[offset]) | UInt16(payload[offset + 1]) << 8)
                    let y = Int16(bitPattern: UInt16(payload[offset + 2]) | UInt16(payload[offset + 3]) << 8)
                    let z = Int16(bitPattern: UInt16(payload[offset + 4]) | UInt16(payload[offset + 5]) << 8)
                    sum += Double(x) * scale + Double(y) * scale + Double(z) * scale
                    samples += 1
                    offset += 6
                }
            }
        }
        precondition(samples == work.sampleCount)
        best = min(best, seconds(elapsed))
        checksum = sum
    }
    return (best, checksum)
}

func millions(_ samples: Int, _ seconds: Double) -> String {
    "\(Double(Int(Double(samples) / seconds / 1e5 + 0.5)) / 10) M samples/s"
}

func report(_ label: String, notifications: Int, packedEvery: Int, rounds: Int) {
    let rate = 800.0
    let work = Workload(notifications: notifications, packedEvery: packedEvery, rate: rate)
    let (full, fullSum) = runFull(work, rounds: rounds, rate: rate)
    let (base, baseSum) = runBaseline(work, rounds: rounds)
    precondition(abs(fullSum - baseSum) <= 1e-6 * max(1, abs(baseSum)), "checksum mismatch: \(fullSum) vs \(baseSum)")
    print("\(label): \(notifications) notifications, \(work.sampleCount) samples, best of \(rounds)")
    print("  full path (parse + scale + timestamp): \(millions(work.sampleCount, full))  [\(full) s]")
    print("  baseline (int16 at fixed offsets × constant): \(millions(work.sampleCount, base))  [\(base) s]")
    print("  ratio full/baseline throughput: \(Double(Int(base / full * 1000 + 0.5)) / 1000)")
}

/// The sensors layer's path: parse, then StreamTracker (gap detection on a trial clock, stamps,
/// scale). Arrivals are generation time + 2 ms + up to 1 ms of jitter (not cumulative), 3 packed :
/// 1 unpacked; no sample is lost, so any gap found is a false one.
func reportTracker(notifications: Int, rounds: Int) {
    let rate = 800.0
    var work = Workload(notifications: notifications, packedEvery: 4, rate: rate)
    var generator = Generator(state: 99)
    var produced = 0
    for i in 0..<work.payloads.count {
        produced += work.payloads[i].count == 20 ? 3 : 1
        work.arrivals[i] = 1_000 + Double(produced - 1) / rate + 0.002 + Double(generator.next() % 1000) * 1e-6
    }
    let parser = MetaWearPacketParser(gyroRegisters: .bmi160)
    let clock = ContinuousClock()
    var best = Double.infinity
    var gaps = 0
    var emitted = 0
    for _ in 0..<rounds {
        var tracker = StreamTracker(odrHz: rate, decoder: SampleDecoder(gyroRange: .dps1000))
        emitted = 0
        let elapsed = clock.measure {
            for i in 0..<work.payloads.count {
                switch try? parser.parse(work.payloads[i]) {
                case .gyroData(let samples), .gyroPacked(let samples):
                    for batch in tracker.push(samples, arrival: work.arrivals[i]) { emitted += batch.samples.count }
                default:
                    break
                }
            }
            for batch in tracker.flush() { emitted += batch.samples.count }
        }
        gaps = tracker.gapCount
        best = min(best, seconds(elapsed))
    }
    precondition(emitted == work.sampleCount, "tracker lost samples")
    print("stream tracker (sensors layer), mixed, 800 Hz, jitter 1 ms: \(work.sampleCount) samples, best of \(rounds)")
    print("  parse + gap detection + stamps + scale: \(millions(work.sampleCount, best))  [\(best) s], false gaps: \(gaps)")
}

let arguments = CommandLine.arguments
let notifications = arguments.count > 1 ? Int(arguments[1]) ?? 1_000_000 : 1_000_000
let rounds = arguments.count > 2 ? Int(arguments[2]) ?? 7 : 7
report("mixed 3 packed : 1 unpacked", notifications: notifications, packedEvery: 4, rounds: rounds)
report("packed only", notifications: notifications, packedEvery: 1, rounds: rounds)
report("unpacked only", notifications: notifications, packedEvery: 0, rounds: rounds)
reportTracker(notifications: notifications, rounds: rounds)
