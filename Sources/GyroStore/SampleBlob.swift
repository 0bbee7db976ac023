/// One sample as the capture layer hands it to the store: its time and three axes in the
/// stream's unit (degrees per second for the gyroscope, g for the accelerometer).
public struct StoredSample: Sendable, Equatable {
    public var timestampMs: Double
    public var x: Float
    public var y: Float
    public var z: Float

    public init(timestampMs: Double, x: Float, y: Float, z: Float) {
        self.timestampMs = timestampMs
        self.x = x
        self.y = y
        self.z = z
    }
}

/// The samples of an open chunk as stores from before the `SampleRing` kept them, in
/// `sampleBatch` rows: 20 bytes a sample, little-endian (Float64 time, three Float32 axes).
/// Read at recovery; new samples go to the ring.
public enum SampleBlob {
    public static let stride = 20

    public static func encode(_ samples: ArraySlice<StoredSample>) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: samples.count * stride)
        bytes.withUnsafeMutableBytes { raw in
            var offset = 0
            for sample in samples {
                raw.storeBytes(of: sample.timestampMs.bitPattern.littleEndian, toByteOffset: offset, as: UInt64.self)
                raw.storeBytes(of: sample.x.bitPattern.littleEndian, toByteOffset: offset + 8, as: UInt32.self)
                raw.storeBytes(of: sample.y.bitPattern.littleEndian, toByteOffset: offset + 12, as: UInt32.self)
                raw.storeBytes(of: sample.z.bitPattern.littleEndian, toByteOffset: offset + 16, as: UInt32.self)
                offset += stride
            }
        }
        return bytes
    }

    public static func decode(_ bytes: some Collection<UInt8>, into samples: inout [StoredSample]) -> Bool {
        guard bytes.count % stride == 0 else { return false }
        let array = Array(bytes)
        array.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let time = Double(bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
                let x = Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)))
                let y = Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)))
                let z = Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset + 16, as: UInt32.self)))
                samples.append(StoredSample(timestampMs: time, x: x, y: y, z: z))
                offset += stride
            }
        }
        return true
    }
}
