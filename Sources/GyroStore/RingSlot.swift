/// One slot of the sample ring (`SampleRing`): new samples of open chunks from one commit, in
/// a blob of fixed size, so that writing it rewrites its own pages in place (one 4 KiB page, or
/// the few of smaller pages it fills) and no other.
///
/// Layout, little-endian: format (1 byte; 0 = never written), the commit's sequence (8), the
/// payload's length (2), an FNV-1a checksum of sequence and payload (4), the payload, zeros.
/// Payload: the number of batches (varint), then per batch the chunk id (varint length, UTF-8),
/// its offset in the chunk (varint) and its samples as a ``ChunkBody`` without head (varint
/// length, bytes): about 5 bytes a sample, times to the microsecond and axes as the documents
/// write them, so a chunk rebuilt from the ring renders the same JSON as one that never left
/// memory.
struct RingSlot: Sendable, Equatable {
    static let size = 4_000

    /// The bytes of the pages a slot takes in a file of `pageSize` pages: one 4 KiB page, or
    /// the overflow pages of smaller ones (its leaf cell shares a page with other slots').
    static func pagesBytes(pageSize: Int) -> Int { (size + pageSize - 1) / pageSize * pageSize }

    static let format: UInt8 = 1
    static let headerSize = 15
    /// Room for the payload, its batch count's varint (at most 3 bytes) included.
    static let payloadRoom = size - headerSize

    struct Batch: Sendable, Equatable {
        var chunkId: String
        var offset: Int
        var samples: [StoredSample]
    }

    var sequence: UInt64
    var batches: [Batch]

    /// One commit's appends, packed into as few payloads as fit a slot each; a batch too long
    /// for the room left is split (its offset moves on with it).
    static func pack(_ appends: [SampleAppend]) throws(RingSlotError) -> [(payload: [UInt8], chunkIds: [String])] {
        var slots: [(payload: [UInt8], chunkIds: [String])] = []
        var body: [UInt8] = [], ids: [String] = []
        func flush() {
            guard !ids.isEmpty else { return }
            var payload: [UInt8] = []
            payload.reserveCapacity(body.count + 3)
            ChunkBody.appendVarint(UInt64(ids.count), to: &payload)
            payload += body
            slots.append((payload, ids))
            body.removeAll(keepingCapacity: true)
            ids.removeAll()
        }
        for append in appends where !append.samples.isEmpty {
            guard append.offset >= 0 else { throw .unstorable(chunkId: append.chunkId, reason: "offset \(append.offset)") }
            var rest = append.samples
            var offset = append.offset
            while !rest.isEmpty {
                let room = payloadRoom - 3 - body.count
                var take = rest.count
                var batch = encode(append.chunkId, offset: offset, rest.prefix(take), unitsPerLSB: append.unitsPerLSB)
                while batch.count > room, take > 1 {
                    take = max(1, min(take - 1, take * room / batch.count))
                    batch = encode(append.chunkId, offset: offset, rest.prefix(take), unitsPerLSB: append.unitsPerLSB)
                }
                if batch.count > room {
                    guard !ids.isEmpty else {
                        throw .unstorable(chunkId: append.chunkId, reason: "one sample takes \(batch.count) bytes, more than a slot")
                    }
                    flush()
                    continue
                }
                body += batch
                if ids.last != append.chunkId { ids.append(append.chunkId) }
                offset += take
                rest = rest.dropFirst(take)
            }
        }
        flush()
        return slots
    }

    static func encode(_ chunkId: String, offset: Int, _ samples: ArraySlice<StoredSample>, unitsPerLSB: Double?) -> [UInt8] {
        let points = ChunkBody.encode(head: [], axisKeys: [], pointSuffix: [], samples: samples, backfilled: false,
                                      unitsPerLSB: unitsPerLSB)
        var out: [UInt8] = []
        out.reserveCapacity(points.count + chunkId.utf8.count + 8)
        ChunkBody.appendVarint(UInt64(chunkId.utf8.count), to: &out)
        out += chunkId.utf8
        ChunkBody.appendVarint(UInt64(offset), to: &out)
        ChunkBody.appendVarint(UInt64(points.count), to: &out)
        out += points
        return out
    }

    /// The slot's bytes: header, payload, zeros to ``size``.
    static func seal(_ payload: [UInt8], sequence: UInt64) -> [UInt8] {
        precondition(payload.count <= payloadRoom, "pack keeps a payload within a slot")
        var slot: [UInt8] = [format]
        slot.reserveCapacity(size)
        appendLE(sequence, to: &slot)
        appendLE(UInt16(payload.count), to: &slot)
        appendLE(checksum(sequence, payload[...]), to: &slot)
        slot += payload
        slot += repeatElement(0, count: size - slot.count)
        return slot
    }

    /// The slot in `bytes`: `nil` for one never written, an error for one whose checksum or
    /// structure does not hold; never a trap, whatever the bytes.
    static func decode(_ bytes: [UInt8]) throws(RingSlotError) -> RingSlot? {
        guard let first = bytes.first, first != 0 else { return nil }
        guard first == format else { throw .damaged("format \(first)") }
        guard bytes.count >= headerSize else { throw .damaged("\(bytes.count) bytes, shorter than its header") }
        let sequence = readLE(UInt64.self, bytes, at: 1)
        let length = Int(readLE(UInt16.self, bytes, at: 9))
        guard length <= bytes.count - headerSize else { throw .damaged("a payload of \(length) bytes") }
        let payload = bytes[headerSize..<(headerSize + length)]
        guard readLE(UInt32.self, bytes, at: 11) == checksum(sequence, payload) else {
            throw .damaged("checksum mismatch at sequence \(sequence)")
        }
        let batches: [Batch]? = Array(payload).withUnsafeBytes { raw in
            var reader = ChunkBody.Reader(bytes: raw)
            guard let count = reader.varint(), count <= UInt64(length) else { return nil }
            var batches: [Batch] = []
            for _ in 0..<count {
                guard let id = reader.lengthPrefixed(), let chunkId = String(validating: id, as: UTF8.self),
                      let offset = reader.varint(), offset <= UInt64(Int32.max),
                      let points = reader.lengthPrefixed(), let parts = ChunkBody.decode(UnsafeRawBufferPointer(rebasing: points))
                else { return nil }
                batches.append(Batch(chunkId: chunkId, offset: Int(offset), samples: parts.points.map(\.sample)))
            }
            return reader.atEnd ? batches : nil
        }
        guard let batches else { throw .damaged("a batch does not decode at sequence \(sequence)") }
        return RingSlot(sequence: sequence, batches: batches)
    }

    static func checksum(_ sequence: UInt64, _ payload: ArraySlice<UInt8>) -> UInt32 {
        var hash: UInt32 = 0x811c_9dc5
        var value = sequence
        for _ in 0..<8 {
            hash = (hash ^ UInt32(value & 0xFF)) &* 0x0100_0193
            value >>= 8
        }
        for byte in payload { hash = (hash ^ UInt32(byte)) &* 0x0100_0193 }
        return hash
    }

    static func appendLE<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Callers have checked that `offset + MemoryLayout<T>.size` is within `bytes`.
    static func readLE<T: FixedWidthInteger>(_: T.Type, _ bytes: [UInt8], at offset: Int) -> T {
        var value: T = 0
        for index in (0..<MemoryLayout<T>.size).reversed() { value = value << 8 | T(bytes[offset + index]) }
        return value
    }
}

enum RingSlotError: Error, Equatable, CustomStringConvertible {
    case unstorable(chunkId: String, reason: String)
    case damaged(String)

    var description: String {
        switch self {
        case .unstorable(let chunkId, let reason): "samples of chunk \(chunkId) cannot be stored in the sample ring: \(reason)"
        case .damaged(let reason): "a slot of the sample ring is damaged: \(reason)"
        }
    }
}
