import BLEHost
import Logging
import MetaWear

extension MetaWearBoard {
    /// When the notification being handled arrived: the clock is read at this board's first
    /// notification of each of the loop's reads and kept for the rest of that read, which arrived
    /// with it (a clock read per notification is a measurable part of the data plane's time,
    /// docs/benchmarks.md).
    /// Outside a read of the loop (a transport that delivers on its own), the clock is read.
    func arrival(_ now: () -> Double) -> Double {
        let read = loop.currentRead
        guard read != 0 else { return now() }
        if read != arrivalRead { (arrivalRead, readArrival) = (read, now()) }
        return readArrival
    }

    /// A batch of notifications, as the link delivered them; their events go to the owner
    /// together at the end, so it is entered once per batch.
    func handle(_ batch: NotificationBatch, now: () -> Double) {
        inBatch = true
        for bytes in batch { handle(bytes, arrival: arrival(now)) }
        inBatch = false
        guard !batchEvents.isEmpty else { return }
        onEvents(batchEvents)
        batchEvents.removeAll(keepingCapacity: true)
    }

    /// Passes `event` on: at the end of the batch being handled, or now.
    func onEvent(_ event: BoardEvent) {
        if inBatch { batchEvents.append(event) } else { onEvents([event]) }
    }

    /// One notification, as the host read it (the slice is valid during this call only).
    func handle(_ bytes: ArraySlice<UInt8>, arrival: Double) {
        guard bytes.count >= 2 else { return }
        // The module first: `download != nil` copies the download's state.
        if bytes[bytes.startIndex] == MetaWearModuleID.logging.rawValue, download != nil, readout(bytes) { return }
        if phase != .discovering, let data = parser.dataSamples(bytes) {
            switch data {
            case .gyro(let samples): gyroData(samples, arrival: arrival)
            case .accelerometer(let samples): accelerometerData(samples, arrival: arrival)
            }
            return
        }
        if phase != .discovering, let timed = parser.timedSamples(bytes) {
            timedGyroData(timed.processor, tick: timed.tick, timed.samples, arrival: arrival)
            return
        }
        let start = bytes.startIndex
        // A read answer (bit 0x80, silent bit folded), or a creation's id (`0b 02 <id>`), may
        // complete a request.
        if bytes[start + 1] & 0x80 != 0 || !waiters.isEmpty {
            let register = bytes[start + 1] & 0x80 != 0 ? bytes[start + 1] & ~MetaWearRegister.silentBit : bytes[start + 1]
            let key = UInt16(bytes[start]) << 8 | UInt16(register)
            if let waiter = waiters.removeValue(forKey: key) {
                answerArrival = arrival
                waiter.continuation.resume(returning: Array(bytes))
                return
            }
        }
        if phase == .discovering {
            let data = bytes[start] == MetaWearModuleID.gyro.rawValue
                || (bytes[start] == MetaWearModuleID.dataProcessor.rawValue && bytes[start + 1] == DataProcessor.outputRegister)
            if data, early.count < 100_000 { early.append((Array(bytes), arrival)) }
            return
        }
        let packet: MetaWearPacket
        do { packet = try parser.parse(Array(bytes)) } catch {
            logger.debug("dropped notification", metadata: ["subsystem": "sensor", "error": "\(error)"])
            return
        }
        switch packet {
        case .gyroData(let samples), .gyroPacked(let samples):
            gyroData(samples, arrival: arrival)
        case .accData(let samples), .accPacked(let samples):
            accelerometerData(samples, arrival: arrival)
        case .switchState(let state):
            onEvent(.button(state))
        case .battery(let state):
            battery = state
            onEvent(.battery(state))
        default:
            break
        }
    }

    private func gyroData(_ samples: RawTriples, arrival: Double, boardTime: Double? = nil) {
        if phase == .stale {
            guard staleGyroMatches, let plan, samples.count == plan.gyro.samplesPerNotification,
                  plan.gyro.boardTime == (boardTime != nil) else { return }
            staleGyroDelivered = true
            resumeStaleWaiter()
        } else if phase != .streaming {
            return
        }
        lastDataArrival = arrival
        onEvent(.samples(.gyro, samples, arrival: boardTime ?? arrival))
    }

    /// Samples of the gyro's time accounter: passed on stamped with when the board produced the
    /// last, as the end of its tick in host time (so never before it was produced, like an arrival).
    /// Before the reset (stale), the accounter is the one this gateway made on the last link: the
    /// reset sequence removes every processor, and the gateway makes no other.
    private func timedGyroData(_ processor: UInt8, tick: UInt32, _ samples: RawTriples, arrival: Double) {
        guard phase == .stale || processor == gyroAccounter, let clock else { return }
        let produced = clock.resetTime + (Double(ticks.unwrap(tick)) + 1) * Logging.tickMilliseconds / 1000
        gyroData(samples, arrival: arrival, boardTime: produced)
    }

    private func accelerometerData(_ samples: RawTriples, arrival: Double) {
        guard phase == .streaming else { return }
        lastDataArrival = arrival
        onEvent(.samples(.accelerometer, samples, arrival: arrival))
    }
}
