extension MetaWearPacketParser {
    /// The samples of one gyro or accelerometer data notification.
    public enum DataSamples: Equatable, Sendable {
        case gyro(RawTriples)
        case accelerometer(RawTriples)
    }

    /// Decodes a well-formed gyro or accelerometer data notification (plain or packed) straight
    /// from the received frame, without copying it: the data path's fast case. Returns nil for
    /// anything else, malformed data included; ``parse(_:)`` names what is wrong with those.
    @inlinable
    public func dataSamples(_ bytes: ArraySlice<UInt8>) -> DataSamples? {
        let count = bytes.count
        guard count == 8 || count == 20 else { return nil }
        let gyro = MetaWearModuleID.gyro.rawValue
        return bytes.withUnsafeBufferPointer { bytes -> DataSamples? in
            let module = bytes[0]
            let register = bytes[1]
            let data: UInt8?
            let packed: UInt8?
            switch module {
            case gyro:
                data = gyroRegisters?.data
                packed = gyroRegisters?.packedData
            case MetaWearModuleID.accelerometer.rawValue:
                data = accelerometerRegisters?.data
                packed = accelerometerRegisters?.packedData
            default:
                return nil
            }
            let triples: RawTriples
            if count == 8, register == data {
                triples = RawTriples(Self.triple(bytes, at: 2))
            } else if count == 20, register == packed {
                triples = RawTriples(Self.triple(bytes, at: 2), Self.triple(bytes, at: 8), Self.triple(bytes, at: 14))
            } else {
                return nil
            }
            return module == gyro ? .gyro(triples) : .accelerometer(triples)
        }
    }

    /// The samples of a time accounter's output (`09 03 <id> <tick u32> <x y z>`, or two samples
    /// through a packer: protocol reference, section 8), straight from the received frame; nil
    /// for anything else.
    @inlinable
    public func timedSamples(_ bytes: ArraySlice<UInt8>) -> (processor: UInt8, tick: UInt32, samples: RawTriples)? {
        let count = bytes.count
        guard count == 13 || count == 19 else { return nil }
        return bytes.withUnsafeBufferPointer { bytes -> (processor: UInt8, tick: UInt32, samples: RawTriples)? in
            guard bytes[0] == MetaWearModuleID.dataProcessor.rawValue, bytes[1] == DataProcessor.outputRegister
            else { return nil }
            let tick = UInt32(bytes[3]) | UInt32(bytes[4]) << 8 | UInt32(bytes[5]) << 16 | UInt32(bytes[6]) << 24
            let samples = count == 13 ? RawTriples(Self.triple(bytes, at: 7))
                : RawTriples(Self.triple(bytes, at: 7), Self.triple(bytes, at: 13))
            return (bytes[2], tick, samples)
        }
    }

    /// The sample at `offset` of a notification whose length the caller has checked: read from
    /// its buffer without a bounds check per byte (a dozen per sample, on every notification).
    @inlinable @inline(__always)
    static func triple(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> RawTriple {
        RawTriple(x: Int16(bitPattern: UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8),
                  y: Int16(bitPattern: UInt16(bytes[offset + 2]) | UInt16(bytes[offset + 3]) << 8),
                  z: Int16(bitPattern: UInt16(bytes[offset + 4]) | UInt16(bytes[offset + 5]) << 8))
    }
}
