// Fuzz target "metawear": notifications through MetaWearPacketParser.parse, dataSamples(_:) and timedSamples(_:)
// (parsers with the BMI160/BMI270 register maps, or with maps learnt from discovery answers in
// the same input), ModuleDiscovery.handle, and StreamTracker.push/flush/restart with the samples
// and arbitrary arrival times; the same bytes through the log readout's entry parser and
// reassembler and the logger read-back answer.
//
// Input: byte 0 parser setup (bits 0-2 gyro map, 3-5 accelerometer map: none, BMI160 rev 0/1,
// BMI270, or either chip at the revision in byte 2; bit 6 SDK 0.21 module list; bit 7 rebuild the
// parser from the discovered BoardInfo after each discovery answer), byte 1 tracker setup (bits 0-2
// rate, 3-4 confirmation window, 5-6 warm-up window, bit 7 accelerometer scale), byte 2 revision,
// byte 3 arrival time base; then records `[control][length][notification...]`: control bits 0-1
// are the operation (0 notify, 1 notify then flush, 2 flush + restart then notify, 3 discovery
// answer), bits 2-7 pick the arrival delta (jitter, reordering, gaps, outages, arbitrary). A
// notification starting with 0xFF is 1-3 raw samples for the tracker instead.
//
// Properties: nothing traps (in the product code: the harness keeps the documented preconditions,
// e.g. flush before restart); dataSamples agrees with parse on every data notification; parse and
// ModuleInfo.parse agree on module-info answers; discovery only ever shrinks its pending list and
// records what it was told; the tracker hands out consecutive indices (a jump only with a gap
// reason), counts every received sample, and after a flush has emitted all of them, with
// nextIndex = emitted + missing; timestamps are finite while arrivals are sane.

import MetaWear

private let rates: [Double] = [25, 50, 100, 200, 400, 800, 1600, 3200]
private let windows: [Double] = [0.5, 0.1, 1.0, 0.02]
private let bases: [Double] = [0, 12_345.678, 1e6, 1e9]

private func gyroMap(_ selector: UInt8, revision: UInt8) -> Gyro.RegisterMap? {
    switch selector & 7 {
    case 1: return .init(chip: .bmi160, revision: 0)
    case 2: return .bmi160
    case 3: return .bmi270
    case 4: return .init(chip: .bmi160, revision: revision)
    case 5: return .init(chip: .bmi270, revision: revision)
    default: return nil
    }
}

private func accelerometerMap(_ selector: UInt8, revision: UInt8) -> Accelerometer.RegisterMap? {
    switch selector & 7 {
    case 1: return .init(chip: .bmi160, revision: 0)
    case 2: return .bmi160
    case 3: return .bmi270
    case 4: return .init(chip: .bmi160, revision: revision)
    case 5: return .init(chip: .bmi270, revision: revision)
    default: return nil
    }
}

/// Checks the tracker's output and accounting as batches come out.
private struct TrackerLedger {
    var pushed: Int64 = 0
    var emitted: Int64 = 0
    var expectedNext: Int64 = 0
    var saneArrivals = true

    mutating func take(_ batches: [StreamTracker.Batch], _ tracker: StreamTracker) {
        for batch in batches {
            fuzzCheck(!batch.samples.isEmpty && batch.samples.count <= RawTriples.capacity, "batch of \(batch.samples.count) samples")
            fuzzCheck(batch.firstIndex >= expectedNext, "index went back: batch at \(batch.firstIndex), expected \(expectedNext)")
            fuzzCheck(batch.firstIndex == expectedNext || batch.gapReason != nil,
                      "indices \(expectedNext)..<\(batch.firstIndex) skipped without a gap reason")
            for (k, sample) in batch.samples.enumerated() {
                fuzzCheck(sample.index == UInt64(batch.firstIndex) + UInt64(k), "sample index \(sample.index) in batch at \(batch.firstIndex)")
                if saneArrivals { fuzzCheck(sample.time.isFinite, "non-finite stamp \(sample.time) from finite arrivals") }
            }
            emitted += Int64(batch.samples.count)
            restartGap = 0
            expectedNext = batch.firstIndex + Int64(batch.samples.count)
        }
        fuzzCheck(tracker.receivedSamples == pushed, "received \(tracker.receivedSamples), pushed \(pushed)")
        fuzzCheck(emitted + Int64(tracker.heldSampleCount) == pushed,
                  "emitted \(emitted) + held \(tracker.heldSampleCount) != pushed \(pushed)")
        fuzzCheck(tracker.isHolding == (tracker.heldSampleCount > 0), "isHolding disagrees with heldSampleCount")
    }

    func checkFlushed(_ tracker: StreamTracker) {
        fuzzCheck(!tracker.isHolding, "still holding after flush")
        fuzzCheck(emitted == pushed, "after flush emitted \(emitted) of \(pushed)")
        fuzzCheck(tracker.nextIndex == expectedNext + restartGap,
                  "nextIndex \(tracker.nextIndex), last batch ended at \(expectedNext), restarts since skipped \(restartGap)")
        fuzzCheck(tracker.nextIndex == emitted + tracker.missingSamples,
                  "nextIndex \(tracker.nextIndex) != emitted \(emitted) + missing \(tracker.missingSamples)")
    }

    /// Indices skipped by restarts since the last batch (the next batch starts after them).
    var restartGap: Int64 = 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMetaWear(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let parserSetup = input.byte()
    let trackerSetup = input.byte()
    let revision = input.byte()
    let base = bases[Int(input.byte() & 3)]

    var parser = MetaWearPacketParser(gyroRegisters: gyroMap(parserSetup, revision: revision),
                                      accelerometerRegisters: accelerometerMap(parserSetup >> 3, revision: revision))
    var discovery = ModuleDiscovery(moduleIDs: parserSetup & 0x40 != 0 ? ModuleDiscovery.sdk021ModuleIDs : ModuleDiscovery.sdk030ModuleIDs)

    let odr = rates[Int(trackerSetup & 7)]
    let period = 1 / odr
    let window = windows[Int((trackerSetup >> 3) & 3)]
    let warmUp: Double? = [nil, 0, window / 2, window][Int((trackerSetup >> 5) & 3)]
    let decoder = trackerSetup & 0x80 == 0 ? SampleDecoder(gyroRange: .dps2000) : SampleDecoder(accelerometerRange: .g4)
    var tracker = StreamTracker(odrHz: odr, decoder: decoder, confirmationWindow: window, warmUpWindow: warmUp)
    var ledger = TrackerLedger()
    var arrival = base
    var reassembler = LogReassembler(firstID: revision & 0x1F, secondID: (revision &+ 1) & 0x1F)
    var logged: [LogReassembler.Sample] = []

    while !input.isAtEnd {
        let control = input.byte()
        let notification = Array(input.take(Int(input.byte())))
        let operation = control & 3
        let code = Int(control >> 2)

        if operation == 3 {
            discover(notification, &discovery)
            if parserSetup & 0x80 != 0 { parser = MetaWearPacketParser(boardInfo: discovery.boardInfo) }
            continue
        }
        if operation == 2 {
            ledger.take(tracker.flush(), tracker)
            ledger.checkFlushed(tracker)
            let stopTime = arrival + delta(code, samples: 1, period: period, window: window, notification)
            let before = tracker.nextIndex
            let end: StreamEnd = switch code % 3 { case 0: .delivered; case 1: .reset(at: stopTime, linkUp: notification.count % 2 == 0); default: .stopped(at: stopTime) }
            tracker.restart(end: end, reason: .other("fuzz"))
            fuzzCheck(tracker.nextIndex >= before, "restart moved nextIndex back")
            ledger.restartGap += tracker.nextIndex - before
        }

        // The log readout's codecs see the same bytes (a `0b 07` entry notification, a `0b 82` answer).
        if let entries = Logging.Entry.parse(notification[...]) {
            let before = logged.count
            reassembler.take(entries, into: &logged)
            fuzzCheck(logged.count - before <= entries.count, "more samples than entries")
            fuzzCheck(reassembler.entries >= 2 * logged.count, "a sample from fewer than two entries")
        }
        _ = Logging.Trigger(readAnswer: notification[...])

        guard let samples = parse(notification, parser) ?? rawTriples(notification) else { continue }
        arrival += delta(code, samples: samples.count, period: period, window: window, notification)
        if !(abs(arrival) < 1e12) { ledger.saneArrivals = false }
        ledger.pushed += Int64(samples.count)
        ledger.take(tracker.push(samples, arrival: arrival), tracker)
        if operation == 1 {
            ledger.take(tracker.flush(), tracker)
            ledger.checkFlushed(tracker)
        }
    }
    ledger.take(tracker.flush(), tracker)
    ledger.checkFlushed(tracker)
    return 0
}

/// The arrival delta for control code 0...63 (see the header comment).
private func delta(_ code: Int, samples: Int, period: Double, window: Double, _ bytes: [UInt8]) -> Double {
    let spacing = Double(samples) * period
    switch code {
    case 0..<40: return Double(code) / 16 * spacing            // jitter around the nominal spacing (16)
    case 40..<48: return -Double(code - 39) * period            // out of order
    case 48..<56: return Double(code - 47) * 10 * spacing       // a few lost notifications
    case 56..<60: return [1, 10, 100, 10_000][code - 56]        // outages, seconds
    case 60..<62: return Double(code - 59) * window / 2         // around the confirmation window
    case 62:                                                    // any whole-millisecond jump, ±24 days
        var value: UInt32 = 0
        for byte in bytes.suffix(4) { value = value << 8 | UInt32(byte) }
        return Double(Int32(bitPattern: value)) / 1000
    default:                                                    // any small double (subnormals included)
        var bits: UInt64 = 0
        for byte in bytes.suffix(8) { bits = bits << 8 | UInt64(byte) }
        let value = Double(bitPattern: bits)
        return value.isFinite && abs(value) <= 1e6 ? value : 0
    }
}

/// A record whose notification starts with 0xFF (no such module) carries raw samples for the
/// tracker directly: 1 to 3 (2 included, which no notification has) of 6 bytes each.
private func rawTriples(_ bytes: [UInt8]) -> RawTriples? {
    guard bytes.first == 0xFF else { return nil }
    let body = Array(bytes.dropFirst())
    let count = min(RawTriples.capacity, max(1, body.count / 6))
    let triples = (0..<count).map { n in
        let value = { (k: Int) -> Int16 in
            let at = n * 6 + k * 2
            return at + 1 < body.count ? Int16(bitPattern: UInt16(body[at]) | UInt16(body[at + 1]) << 8) : 0
        }
        return RawTriple(x: value(0), y: value(1), z: value(2))
    }
    let samples = RawTriples(triples)
    fuzzCheck(samples.count == count && Array(samples) == triples, "RawTriples does not hold what it was given")
    return samples
}

/// Parses one notification both ways; returns its samples when it is a data notification.
private func parse(_ bytes: [UInt8], _ parser: MetaWearPacketParser) -> RawTriples? {
    let fast = parser.dataSamples(bytes[...])
    fuzzCheck(parser.dataSamples(offsetSlice(bytes)) == fast, "dataSamples depends on slice indices: \(hexString(bytes))")
    if let timed = parser.timedSamples(bytes[...]) {
        fuzzCheck(bytes.count == 7 + 6 * timed.samples.count && bytes[0] == 0x09 && bytes[1] == 0x03 && timed.processor == bytes[2],
                  "timedSamples decoded what is no accounter output: \(hexString(bytes))")
        fuzzCheck(parser.timedSamples(offsetSlice(bytes))?.samples == timed.samples,
                  "timedSamples depends on slice indices: \(hexString(bytes))")
    }
    let packet: MetaWearPacket
    do {
        packet = try parser.parse(bytes)
    } catch {
        _ = error.description
        fuzzCheck(fast == nil, "dataSamples decoded what parse rejects (\(error)): \(hexString(bytes))")
        return nil
    }
    switch (packet, fast) {
    case let (.gyroData(samples), .gyro(fastSamples)?), let (.gyroPacked(samples), .gyro(fastSamples)?),
         let (.accData(samples), .accelerometer(fastSamples)?), let (.accPacked(samples), .accelerometer(fastSamples)?):
        fuzzCheck(samples == fastSamples, "parse and dataSamples disagree on the samples: \(hexString(bytes))")
        fuzzCheck(samples.count == (bytes.count == 8 ? 1 : 3), "\(samples.count) samples in \(bytes.count) bytes")
        return samples
    case (.gyroData, _), (.gyroPacked, _), (.accData, _), (.accPacked, _):
        fuzzCheck(false, "parse found data that dataSamples missed: \(packet) \(hexString(bytes))")
    default:
        fuzzCheck(fast == nil, "dataSamples decoded a \(packet): \(hexString(bytes))")
    }
    if bytes.count >= 2, bytes[1] == MetaWearRegister.readBit {
        let answer = try? ModuleInfo.parse(bytes)
        guard case let .moduleInfo(id, info) = packet, let answer else {
            fuzzCheck(false, "parse and ModuleInfo.parse disagree on \(hexString(bytes)): \(packet)")
            return nil
        }
        fuzzCheck(answer.0 == id && answer.1 == info, "parse and ModuleInfo.parse disagree on \(hexString(bytes))")
    }
    return nil
}

private func discover(_ bytes: [UInt8], _ discovery: inout ModuleDiscovery) {
    let before = discovery.pending
    let outcome: ModuleDiscovery.Outcome
    do { outcome = try discovery.handle(bytes) } catch {
        _ = error.description
        fuzzCheck(discovery.pending == before, "a rejected answer changed the pending list")
        return
    }
    let id = MetaWearModuleID(bytes[0])
    fuzzCheck(discovery.boardInfo.isKnown(id), "answer for \(id) not recorded")
    fuzzCheck(!discovery.pending.contains(id), "\(id) still pending after its answer")
    fuzzCheck(discovery.pending.count == before.count - (before.contains(id) ? 1 : 0), "pending list changed by more than the answer")
    switch outcome {
    case .recorded(let recorded): fuzzCheck(recorded == id && before.first == id, "recorded \(recorded) but \(String(describing: before.first)) was asked")
    case .unexpected(let other): fuzzCheck(other == id && before.first != id, "unexpected \(other) while \(String(describing: before.first)) was asked")
    }
    fuzzCheck(discovery.isComplete == discovery.pending.isEmpty && (discovery.nextRequest == nil) == discovery.isComplete,
              "isComplete / nextRequest disagree")
    let info = discovery.boardInfo
    _ = (info.model, info.gyroChip, info.accelerometerChip, info.gyroRegisters, info.accelerometerRegisters,
         info.ledRevision, info.loggerSlotCount, info.presentModules)
}
