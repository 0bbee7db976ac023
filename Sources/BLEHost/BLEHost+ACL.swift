import ATT
import BluetoothWire
import HCI
import L2CAP

extension BLEHost {
    /// The ATT_MTU this host can receive, offered when a peer starts the exchange.
    static let serverRxMTU: UInt16 = 247

    // MARK: - Outgoing

    /// Queues one L2CAP frame on `handle`, fragmented to the controller's ACL buffer size.
    /// - throws: ``BLEHostError/disconnected(handle:reason:)`` when the link is gone.
    func sendL2CAP(handle: UInt16, channel: L2CAPChannelID, payload: [UInt8]) throws(BLEHostError) {
        guard connections[handle] != nil else {
            throw .disconnected(handle: handle, reason: .unknownConnectionIdentifier)
        }
        let frame = L2CAPBasicFrame(channelID: channel, payload: payload).encode()
        aclQueue.append(contentsOf: ACLFragmenter.fragments(of: frame, handle: handle, maximumDataLength: aclBufferSize))
        pumpACL()
    }

    /// Sends queued fragments while the controller has buffers, oldest first. Never exceeds the
    /// credits from LE Read Buffer Size; Number Of Completed Packets calls this again.
    func pumpACL() {
        while aclQueueHead < aclQueue.count {
            let packet = aclQueue[aclQueueHead]
            guard aclCredits.consume(handle: packet.handle) else { break }
            aclQueueHead += 1
            counters.aclSent += 1
            var writer = ByteWriter(capacity: 4 + packet.data.count)
            packet.write(to: &writer)
            write(H4Packet(type: .aclData, bytes: writer.bytes[...]))
        }
        if aclQueueHead == aclQueue.count {
            aclQueue.removeAll(keepingCapacity: true)
            aclQueueHead = 0
        } else if aclQueueHead > 256 {
            aclQueue.removeFirst(aclQueueHead)
            aclQueueHead = 0
        }
    }

    // MARK: - Incoming

    func receive(_ packet: ACLPacket) {
        guard let index = inbound.firstIndex(where: { $0.handle == packet.handle }) else {
            counters.unknown += 1
            return
        }
        var dropped: ACLReassemblyError?
        let reassembled = inbound[index].reassembler.push(packet, dropped: &dropped)
        let bearer = inbound[index].bearer
        if let dropped {
            counters.reassemblyErrors += 1
            logger.debug("ACL reassembly dropped bytes", metadata: ["handle": "\(packet.handle)", "detail": "\(dropped)"])
        }
        guard let bytes = reassembled else { return }
        let frame: L2CAPBasicFrame
        do {
            frame = try L2CAPBasicFrame(decoding: bytes)
        } catch {
            counters.malformed += 1
            return
        }
        switch frame.channelID {
        case .att:
            receiveATT(frame.payload, handle: packet.handle, bearer: bearer)
        case .leSignaling:
            receiveSignal(frame.payload, handle: packet.handle)
        default:
            counters.unknown += 1
            logger.debug("L2CAP frame on unsupported channel dropped", metadata: ["cid": "\(frame.channelID)"])
        }
    }

    private func receiveATT(_ payload: ArraySlice<UInt8>, handle: UInt16, bearer: ATTBearer) {
        switch bearer.receive(payload) {
        case .none:
            break
        case .confirm:
            try? sendL2CAP(handle: handle, channel: .att, payload: [ATTOpcode.handleValueConfirmation.rawValue])
        case .malformed:
            counters.malformed += 1
        case .unexpected:
            if let first = payload.first, ATTOpcode(rawValue: first) == .exchangeMTURequest, payload.count == 3 {
                // The peer (as client) offers its MTU: answer with ours (Vol 3, Part F, 3.4.2).
                let clientMTU = UInt16(payload[payload.startIndex + 1]) | UInt16(payload[payload.startIndex + 2]) << 8
                let response = ATTPDU.exchangeMTUResponse(ExchangeMTUResponse(serverRxMTU: Self.serverRxMTU))
                bearer.mtu = max(23, min(clientMTU, Self.serverRxMTU))
                try? sendL2CAP(handle: handle, channel: .att, payload: response.encode())
                return
            }
            counters.unknown += 1
            // A request from the peer: this host has no GATT server (Vol 3, Part F, 3.4.1.1).
            if let first = payload.first, ATTOpcode(rawValue: first).isRequest {
                var handleInError: UInt16 = 0
                if payload.count >= 3 {
                    handleInError = UInt16(payload[payload.startIndex + 1]) | UInt16(payload[payload.startIndex + 2]) << 8
                }
                let error = ATTPDU.errorResponse(ErrorResponse(requestOpcodeInError: ATTOpcode(rawValue: first),
                                                               attributeHandleInError: handleInError,
                                                               errorCode: .requestNotSupported))
                try? sendL2CAP(handle: handle, channel: .att, payload: error.encode())
            }
        }
    }

    // MARK: - LE signalling channel

    private func receiveSignal(_ payload: ArraySlice<UInt8>, handle: UInt16) {
        let signal: L2CAPSignal
        do {
            signal = try L2CAPSignal(decoding: payload)
        } catch {
            counters.malformed += 1
            // Vol 3, Part A, 4.1: answer with Command Reject when the identifier is readable.
            if payload.count >= 2, payload[payload.startIndex + 1] != 0 {
                let reject = L2CAPSignal.commandReject(.notUnderstood(identifier: payload[payload.startIndex + 1]))
                try? sendL2CAP(handle: handle, channel: .leSignaling, payload: reject.encode())
            }
            return
        }
        switch signal {
        case let .connectionParameterUpdateRequest(request):
            answerParameterUpdateRequest(request, handle: handle)
        case .connectionParameterUpdateResponse, .commandReject:
            // We never send requests as central; a stray answer is the peer's confusion.
            counters.unknown += 1
        case let .unknown(code, identifier, _):
            counters.unknown += 1
            logger.debug("L2CAP signal not understood", metadata: ["code": "\(code)"])
            let reject = L2CAPSignal.commandReject(.notUnderstood(identifier: identifier))
            try? sendL2CAP(handle: handle, channel: .leSignaling, payload: reject.encode())
        }
    }

    /// Peer-initiated update over L2CAP (Vol 3, Part A, 4.20): validate, answer, and when
    /// accepted issue LE Connection Update with the requested values.
    private func answerParameterUpdateRequest(_ request: ConnectionParameterUpdateRequest, handle: UInt16) {
        var verdict = request.validate()
        if verdict == .accept, !configuration.acceptsPeerConnectionParameterRequests {
            verdict = .reject(.intervalOutOfRange(min: request.intervalMin, max: request.intervalMax))
        }
        let response = L2CAPSignal.connectionParameterUpdateResponse(
            ConnectionParameterUpdateResponse(identifier: request.identifier, result: verdict.result))
        try? sendL2CAP(handle: handle, channel: .leSignaling, payload: response.encode())
        switch verdict {
        case .accept:
            counters.parameterAccepted += 1
            logger.info("peer connection parameter request accepted", metadata: [
                "handle": "\(handle)", "interval": "\(request.intervalMin)...\(request.intervalMax)",
                "latency": "\(request.latency)", "timeout": "\(request.timeout)"])
            sendCommandIgnoringResult(LEConnectionUpdateCommand(
                connectionHandle: handle,
                connectionParameters: LEConnectionParameterRange(
                    connectionIntervalMin: request.intervalMin, connectionIntervalMax: request.intervalMax,
                    maxLatency: request.latency, supervisionTimeout: request.timeout)))
        case let .reject(violation):
            counters.parameterRejected += 1
            logger.warning("peer connection parameter request rejected", metadata: ["handle": "\(handle)", "why": "\(violation)"])
        }
    }

    /// Link-layer request (LE Remote Connection Parameter Request event, Vol 4, Part E, 7.7.65.6).
    func answerRemoteParameterRequest(_ event: LERemoteConnectionParameterRequestEvent) {
        let request = ConnectionParameterUpdateRequest(identifier: 1, intervalMin: event.intervalMin,
                                                       intervalMax: event.intervalMax, latency: event.maxLatency,
                                                       timeout: event.timeout)
        if request.validate() == .accept, configuration.acceptsPeerConnectionParameterRequests {
            counters.parameterAccepted += 1
            sendCommandIgnoringResult(LERemoteConnectionParameterRequestReplyCommand(
                connectionHandle: event.connectionHandle,
                connectionParameters: LEConnectionParameterRange(
                    connectionIntervalMin: event.intervalMin, connectionIntervalMax: event.intervalMax,
                    maxLatency: event.maxLatency, supervisionTimeout: event.timeout)))
        } else {
            counters.parameterRejected += 1
            sendCommandIgnoringResult(LERemoteConnectionParameterRequestNegativeReplyCommand(
                connectionHandle: event.connectionHandle, reason: .unacceptableConnectionParameters))
        }
    }
}
