import ATT
import BluetoothWire
import PosixThreads

/// The GATT client of one link, Core v5.4, Vol 3, Part G, 4.
///
/// Procedures run one at a time (ATT allows one outstanding request per bearer); callers queue
/// in arrival order. Each request has the configured ATT timeout (30 s by default). An ATT
/// Error Response becomes ``GATTError/attError(code:handle:request:)``; a link that goes down
/// fails the running request with ``GATTError/disconnected(request:)`` and finishes every
/// notification stream.
public actor GATTClient {
    nonisolated let bearer: ATTBearer
    private var busy = false
    private var queue: [CheckedContinuation<Void, Never>] = []

    init(bearer: ATTBearer) {
        self.bearer = bearer
    }

    /// The ATT_MTU in use (23 until an exchange).
    public var mtu: UInt16 { bearer.mtu }

    /// Exchange MTU (4.3.1): offers `mtu` and returns the ATT_MTU now in use, min(ours, theirs).
    public func exchangeMTU(_ mtu: UInt16) async throws -> UInt16 {
        guard mtu >= 23 else { throw GATTError.notSupported("ATT_MTU \(mtu) is below the minimum 23") }
        return try await exclusive {
            let response = try await request(.exchangeMTURequest(ExchangeMTURequest(clientRxMTU: mtu)),
                                             name: "Exchange MTU")
            guard case let .exchangeMTUResponse(body) = response else { throw unexpected(response, "Exchange MTU") }
            let agreed = max(23, min(mtu, body.serverRxMTU))
            bearer.mtu = agreed
            return agreed
        }
    }

    /// Discover All Primary Services (4.4.1) with Read By Group Type until Attribute Not Found.
    public func discoverPrimaryServices() async throws -> [GATTService] {
        try await exclusive {
            var services: [GATTService] = []
            var start: UInt16 = 0x0001
            while true {
                let name = "Read By Group Type (primary services from 0x\(String(start, radix: 16)))"
                let pdu = ATTPDU.readByGroupTypeRequest(ReadByGroupTypeRequest(
                    startingHandle: start, endingHandle: 0xFFFF, attributeGroupType: BluetoothUUID(uuid16: 0x2800)))
                let response: ATTPDU
                do {
                    response = try await request(pdu, name: name)
                } catch GATTError.attError(code: .attributeNotFound, _, _) {
                    break
                }
                guard case let .readByGroupTypeResponse(body) = response, !body.attributeDataList.isEmpty else {
                    throw unexpected(response, name)
                }
                var last: UInt16 = start
                for entry in body.attributeDataList {
                    var reader = ByteReader(entry.value)
                    guard let uuid = try? BluetoothUUID(from: &reader, length: entry.value.count) else {
                        throw GATTError.unexpectedResponse(request: name, detail: "service UUID of \(entry.value.count) bytes")
                    }
                    services.append(GATTService(uuid: uuid, startHandle: entry.attributeHandle, endHandle: entry.endGroupHandle))
                    last = max(last, entry.endGroupHandle)
                }
                if last == 0xFFFF || last < start { break }
                start = last + 1
            }
            return services
        }
    }

    /// Discover All Characteristics of a Service (4.6.1) with Read By Type.
    public func discoverCharacteristics(of service: GATTService) async throws -> [GATTCharacteristic] {
        try await exclusive {
            var found: [GATTCharacteristic] = []
            var start = service.startHandle
            while start <= service.endHandle {
                let name = "Read By Type (characteristics 0x\(String(start, radix: 16))...0x\(String(service.endHandle, radix: 16)))"
                let pdu = ATTPDU.readByTypeRequest(ReadByTypeRequest(
                    startingHandle: start, endingHandle: service.endHandle, attributeType: BluetoothUUID(uuid16: 0x2803)))
                let response: ATTPDU
                do {
                    response = try await request(pdu, name: name)
                } catch GATTError.attError(code: .attributeNotFound, _, _) {
                    break
                }
                guard case let .readByTypeResponse(body) = response, !body.attributeDataList.isEmpty else {
                    throw unexpected(response, name)
                }
                var last = start
                for entry in body.attributeDataList {
                    // Properties (1), value handle (2), UUID (2 or 16), 3.3.1.
                    var reader = ByteReader(entry.value)
                    guard entry.value.count == 5 || entry.value.count == 19,
                          let properties = try? reader.readUInt8(), let valueHandle = try? reader.readUInt16(),
                          let uuid = try? BluetoothUUID(from: &reader, length: entry.value.count - 3) else {
                        throw GATTError.unexpectedResponse(request: name, detail: "characteristic declaration of \(entry.value.count) bytes")
                    }
                    found.append(GATTCharacteristic(uuid: uuid, declarationHandle: entry.handle, valueHandle: valueHandle,
                                                    endHandle: service.endHandle,
                                                    properties: GATTCharacteristicProperties(rawValue: properties)))
                    last = max(last, entry.handle)
                }
                if last >= service.endHandle { break }
                start = last + 1
            }
            found.sort { $0.declarationHandle < $1.declarationHandle }
            // Each characteristic ends where the next declaration begins.
            for index in found.indices.dropLast() {
                found[index].endHandle = found[index + 1].declarationHandle - 1
            }
            return found
        }
    }

    /// Discover All Characteristic Descriptors (4.7.1) with Find Information.
    public func discoverDescriptors(of characteristic: GATTCharacteristic) async throws -> [GATTDescriptor] {
        guard characteristic.valueHandle < characteristic.endHandle else { return [] }
        return try await exclusive {
            var found: [GATTDescriptor] = []
            var start = characteristic.valueHandle + 1
            while start <= characteristic.endHandle {
                let name = "Find Information (0x\(String(start, radix: 16))...0x\(String(characteristic.endHandle, radix: 16)))"
                let pdu = ATTPDU.findInformationRequest(FindInformationRequest(startingHandle: start,
                                                                               endingHandle: characteristic.endHandle))
                let response: ATTPDU
                do {
                    response = try await request(pdu, name: name)
                } catch GATTError.attError(code: .attributeNotFound, _, _) {
                    break
                }
                guard case let .findInformationResponse(body) = response, !body.entries.isEmpty else {
                    throw unexpected(response, name)
                }
                var last = start
                for entry in body.entries {
                    found.append(GATTDescriptor(uuid: entry.type, handle: entry.handle))
                    last = max(last, entry.handle)
                }
                if last >= characteristic.endHandle { break }
                start = last + 1
            }
            return found
        }
    }

    /// Read Characteristic Value (4.8.1), continued with Read Blob (4.8.3) while the response fills the MTU.
    public func read(_ characteristic: GATTCharacteristic) async throws -> [UInt8] {
        try await readValue(handle: characteristic.valueHandle)
    }

    /// Reads any attribute by handle (descriptors included), long values via Read Blob.
    public func readValue(handle: UInt16) async throws -> [UInt8] {
        try await exclusive {
            let hex = String(handle, radix: 16)
            let first = try await request(.readRequest(ReadRequest(attributeHandle: handle)), name: "Read 0x\(hex)")
            guard case let .readResponse(body) = first else { throw unexpected(first, "Read 0x\(hex)") }
            var value = body.attributeValue
            let full = Int(bearer.mtu) - 1
            var chunk = value.count
            while chunk == full, value.count < 512 {
                let name = "Read Blob 0x\(hex) at \(value.count)"
                let response: ATTPDU
                do {
                    response = try await request(.readBlobRequest(ReadBlobRequest(attributeHandle: handle,
                                                                                  valueOffset: UInt16(value.count))), name: name)
                } catch GATTError.attError(code: .attributeNotLong, _, _) {
                    break
                } catch GATTError.attError(code: .invalidOffset, _, _) {
                    break
                }
                guard case let .readBlobResponse(part) = response else { throw unexpected(response, name) }
                value += part.partAttributeValue
                chunk = part.partAttributeValue.count
            }
            return value
        }
    }

    /// Write Characteristic Value (4.9.3, with response; Prepare/Execute Write for values over
    /// ATT_MTU - 3, 4.9.4) or Write Without Response (4.9.1, at most ATT_MTU - 3).
    public func write(_ characteristic: GATTCharacteristic, _ value: [UInt8], withResponse: Bool) async throws {
        try await writeValue(handle: characteristic.valueHandle, value, withResponse: withResponse)
    }

    /// Writes any attribute by handle (descriptors included).
    public func writeValue(handle: UInt16, _ value: [UInt8], withResponse: Bool) async throws {
        let hex = String(handle, radix: 16)
        let maximum = Int(bearer.mtu) - 3
        if !withResponse {
            guard value.count <= maximum else { throw GATTError.valueTooLong(length: value.count, maximum: maximum) }
            // Commands need no queue slot, but keep order with requests queued before them.
            try await exclusive {
                try await bearer.command(ATTPDU.writeCommand(WriteCommand(attributeHandle: handle, attributeValue: value)).encode())
            }
            return
        }
        try await exclusive {
            if value.count <= maximum {
                let name = "Write 0x\(hex)"
                let response = try await request(.writeRequest(WriteRequest(attributeHandle: handle, attributeValue: value)), name: name)
                guard case .writeResponse = response else { throw unexpected(response, name) }
                return
            }
            try await longWrite(handle: handle, value)
        }
    }

    /// Prepare Write requests of ATT_MTU - 5 octets, then Execute Write (4.9.4). Each prepared
    /// part must be echoed back unchanged; otherwise the queue is cancelled.
    private func longWrite(handle: UInt16, _ value: [UInt8]) async throws {
        let hex = String(handle, radix: 16)
        let part = Int(bearer.mtu) - 5
        var offset = 0
        while offset < value.count {
            let end = min(value.count, offset + part)
            var writer = ByteWriter(capacity: 5 + end - offset)
            writer.writeUInt8(ATTOpcode.prepareWriteRequest.rawValue)
            writer.writeUInt16(handle)
            writer.writeUInt16(UInt16(offset))
            writer.writeBytes(value[offset..<end])
            let name = "Prepare Write 0x\(hex) at \(offset)"
            let response = try await request(raw: writer.bytes, name: name)
            guard case let .unknown(opcode, parameters) = response, opcode == .prepareWriteResponse,
                  parameters == writer.bytes.dropFirst().map({ $0 }) else {
                _ = try? await request(raw: [ATTOpcode.executeWriteRequest.rawValue, 0x00], name: "Execute Write (cancel)")
                throw unexpected(response, name)
            }
            offset = end
        }
        let name = "Execute Write 0x\(hex)"
        let response = try await request(raw: [ATTOpcode.executeWriteRequest.rawValue, 0x01], name: name)
        guard case let .unknown(opcode, _) = response, opcode == .executeWriteResponse else { throw unexpected(response, name) }
    }

    /// Writes the characteristic's CCCD (0x0001 notifications, 0x0002 indications) and hands
    /// the values of each transport wake-up to `receive` in one batch, synchronously on the
    /// host's `ThreadExecutor` at the end of that wake-up, or earlier when anything else the
    /// host passes to this link (a response, the link's end) comes after them (the batch is
    /// valid during the call only); `ended` is called once when the link goes down. The
    /// subscription is registered before the CCCD write, so no value is missed. Indications
    /// are confirmed by the host. `receive` runs on the data path: it must not block.
    public func subscribe(_ characteristic: GATTCharacteristic, indications: Bool = false,
                          receiveBatch receive: @escaping @Sendable (NotificationBatch) -> Void,
                          ended: @escaping @Sendable () -> Void) async throws {
        let needed: GATTCharacteristicProperties = indications ? .indicate : .notify
        guard characteristic.properties.contains(needed) else {
            throw GATTError.notSupported("characteristic \(characteristic.uuid) (0x\(String(characteristic.valueHandle, radix: 16))) does not support \(indications ? "indications" : "notifications")")
        }
        let descriptors = try await discoverDescriptors(of: characteristic)
        guard let cccd = descriptors.first(where: { $0.uuid == GATTDescriptor.clientCharacteristicConfigurationUUID }) else {
            throw GATTError.notSupported("characteristic \(characteristic.uuid) has no Client Characteristic Configuration descriptor")
        }
        let handle = characteristic.valueHandle
        let id = try bearer.subscribe(handle: handle, NotificationSubscriber(batch: receive, ended: ended))
        do {
            try await writeValue(handle: cccd.handle, indications ? [0x02, 0x00] : [0x01, 0x00], withResponse: true)
        } catch {
            bearer.unsubscribe(id, handle: handle)
            throw error
        }
    }

    /// ``subscribe(_:indications:receiveBatch:ended:)`` with the values one at a time.
    public func subscribe(_ characteristic: GATTCharacteristic, indications: Bool = false,
                          receive: @escaping @Sendable (ArraySlice<UInt8>) -> Void,
                          ended: @escaping @Sendable () -> Void) async throws {
        try await subscribe(characteristic, indications: indications,
                            receiveBatch: { for value in $0 { receive(value) } }, ended: ended)
    }

    /// ``subscribe(_:indications:receiveBatch:ended:)`` as a stream of copied values that finishes
    /// when the link goes down, for callers off the data path (tools, tests). It buffers
    /// without limit: consume it promptly.
    public func subscribe(_ characteristic: GATTCharacteristic, indications: Bool = false) async throws -> AsyncStream<[UInt8]> {
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .unbounded)
        try await subscribe(characteristic, indications: indications,
                            receive: { continuation.yield(Array($0)) }, ended: { continuation.finish() })
        return stream
    }

    /// Writes 0x0000 to the characteristic's CCCD; open streams stay open until disconnection.
    public func unsubscribe(_ characteristic: GATTCharacteristic) async throws {
        let descriptors = try await discoverDescriptors(of: characteristic)
        guard let cccd = descriptors.first(where: { $0.uuid == GATTDescriptor.clientCharacteristicConfigurationUUID }) else { return }
        try await writeValue(handle: cccd.handle, [0x00, 0x00], withResponse: true)
    }

    // MARK: - Request plumbing

    private func request(_ pdu: ATTPDU, name: String) async throws -> ATTPDU {
        try await request(raw: pdu.encode(), name: name)
    }

    private func request(raw: [UInt8], name: String) async throws -> ATTPDU {
        let response = try await bearer.request(raw, name: name)
        if case let .errorResponse(error) = response {
            throw GATTError.attError(code: error.errorCode, handle: error.attributeHandleInError, request: name)
        }
        return response
    }

    private func unexpected(_ response: ATTPDU, _ name: String) -> GATTError {
        .unexpectedResponse(request: name, detail: "got \(response.opcode)")
    }

    /// Runs `body` when no other procedure runs: callers are served in arrival order.
    private func exclusive<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        if busy {
            await withCheckedContinuation { queue.append($0) }
        } else {
            busy = true
        }
        defer {
            if queue.isEmpty { busy = false } else { queue.removeFirst().resume() }
        }
        return try await body()
    }
}
