/// Scales raw int16 triples into physical units for the range the host configured.
///
/// The board sends raw counts; the scale is **host state** (protocol reference, 3.4): build the
/// decoder from the configuration last written, or read back with `13 83` / `03 83` after a
/// reconnect. Values are `raw × (1 / LSB-per-unit)`, which differs from the SDK's `raw / LSB` by at
/// most one ulp.
public struct SampleDecoder: Hashable, Sendable {
    /// Physical units per LSB (°/s or g).
    public let unitsPerLSB: Double

    /// A decoder for `lsbPerUnit` counts per °/s or per g. It is a programmer error to pass a
    /// non-positive or non-finite value.
    @inlinable
    public init(lsbPerUnit: Double) {
        precondition(lsbPerUnit > 0 && lsbPerUnit.isFinite, "LSB per unit must be positive")
        unitsPerLSB = 1 / lsbPerUnit
    }

    /// Gyro counts → °/s.
    public init(gyroRange: Gyro.Range) { self.init(lsbPerUnit: gyroRange.lsbPerDegreePerSecond) }

    /// Accelerometer counts → g.
    public init(accelerometerRange: Accelerometer.Range) { self.init(lsbPerUnit: accelerometerRange.lsbPerG) }

    /// One sample in `Double`.
    @inlinable
    public func scale(_ raw: RawTriple) -> ScaledTriple<Double> {
        ScaledTriple(x: Double(raw.x) * unitsPerLSB, y: Double(raw.y) * unitsPerLSB, z: Double(raw.z) * unitsPerLSB)
    }

    /// One sample in `Float` (computed in `Double`, then rounded once).
    @inlinable
    public func scaleFloat(_ raw: RawTriple) -> ScaledTriple<Float> {
        ScaledTriple(
            x: Float(Double(raw.x) * unitsPerLSB), y: Float(Double(raw.y) * unitsPerLSB),
            z: Float(Double(raw.z) * unitsPerLSB))
    }

    /// The samples of one notification, scaled and stamped with `timing`, appended oldest first.
    @inlinable
    public func decode(_ samples: RawTriples, timing: SampleClock.Timing, into output: inout [TimestampedSample]) {
        for offset in samples.indices {
            let value = scale(samples[offset])
            output.append(
                TimestampedSample(
                    index: timing.index(at: offset), time: timing.time(at: offset), x: value.x, y: value.y, z: value.z))
        }
    }
}

/// Three scaled axis values.
public struct ScaledTriple<Value: BinaryFloatingPoint & Sendable & Hashable>: Hashable, Sendable {
    public var x: Value
    public var y: Value
    public var z: Value

    @inlinable
    public init(x: Value, y: Value, z: Value) {
        self.x = x
        self.y = y
        self.z = z
    }
}

/// A scaled sample with its stream index and host-clock time (seconds).
public struct TimestampedSample: Hashable, Sendable {
    /// Running count within the stream, from 0 at start.
    public var index: UInt64
    /// Host time in seconds, in the time base of the arrival times given to ``SampleClock``.
    public var time: Double
    public var x: Double
    public var y: Double
    public var z: Double

    @inlinable
    public init(index: UInt64, time: Double, x: Double, y: Double, z: Double) {
        self.index = index
        self.time = time
        self.x = x
        self.y = y
        self.z = z
    }
}
