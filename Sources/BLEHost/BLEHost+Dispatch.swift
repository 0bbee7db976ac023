import BluetoothWire
import HCI

extension BLEHost {
    /// Handles one packet from the controller. Never throws and never traps.
    func dispatch(_ packet: H4Packet) {
        switch packet.type {
        case .event:
            counters.events += 1
            let event: HCIEvent
            do {
                event = try HCIEvent(decoding: packet.bytes)
            } catch {
                counters.malformed += 1
                logger.warning("malformed HCI event dropped", metadata: ["error": "\(error)"])
                return
            }
            handle(event)
        case .aclData:
            counters.aclReceived += 1
            let acl: ACLPacket
            do {
                acl = try ACLPacket(decoding: packet.bytes)
            } catch {
                counters.malformed += 1
                logger.warning("malformed ACL packet dropped", metadata: ["error": "\(error)"])
                return
            }
            receive(acl)
        default:
            counters.unknown += 1
            logger.debug("unexpected packet type from controller dropped", metadata: ["type": "\(packet.type)"])
        }
    }

    func handle(_ event: HCIEvent) {
        switch event {
        case .commandComplete, .commandStatus:
            perform(commandFlow.receive(event, now: clock.now))
        case let .disconnectionComplete(body):
            guard body.status.isSuccess else { return } // the Disconnect command's failure, reported there
            guard connections[body.connectionHandle] != nil else {
                counters.unknown += 1
                return
            }
            linkDown(handle: body.connectionHandle, reason: .controller(body.reason))
        case let .numberOfCompletedPackets(body):
            let anomalies = aclCredits.complete(body)
            if !anomalies.isEmpty {
                counters.creditAnomalies += anomalies.count
                for anomaly in anomalies { logger.debug("ACL credit anomaly", metadata: ["detail": "\(anomaly)"]) }
            }
            pumpACL()
        case let .leMeta(meta):
            handle(meta)
        case let .unknown(code, parameters):
            counters.unknown += 1
            switch code {
            case .hardwareError:
                logger.error("controller reports a hardware error; reset or replug it if links stop working",
                             metadata: ["code": "\(parameters.first.map { String($0, radix: 16) } ?? "?")"])
            case .dataBufferOverflow:
                logger.error("controller reports a data buffer overflow (ACL sent beyond its buffers)")
            default:
                logger.debug("unhandled HCI event", metadata: ["code": "\(code)"])
            }
        }
    }

    func handle(_ meta: LEMetaEvent) {
        switch meta {
        case let .advertisingReport(body):
            for report in body.reports {
                // Event types 0 ADV_IND and 1 ADV_DIRECT_IND are connectable; 4 is a scan response.
                collect(address: report.address, addressType: report.addressType, data: report.data, rssi: report.rssi,
                        connectable: report.eventType <= 1, isScanResponse: report.eventType == 4)
            }
        case let .extendedAdvertisingReport(body):
            for report in body.reports {
                collect(address: report.address, addressType: report.addressType, data: report.data, rssi: report.rssi,
                        connectable: report.eventType.isConnectable, isScanResponse: report.eventType.isScanResponse)
            }
        case let .connectionComplete(body):
            connectionCompleted(status: body.status, handle: body.connectionHandle, role: body.role.rawValue,
                                peer: body.peerAddress, peerType: body.peerAddressType, interval: body.connectionInterval,
                                latency: body.peripheralLatency, timeout: body.supervisionTimeout)
        case let .enhancedConnectionComplete(body):
            connectionCompleted(status: body.status, handle: body.connectionHandle, role: body.role.rawValue,
                                peer: body.peerAddress, peerType: body.peerAddressType, interval: body.connectionInterval,
                                latency: body.peripheralLatency, timeout: body.supervisionTimeout)
        case let .connectionUpdateComplete(body):
            if body.status.isSuccess, var record = connections[body.connectionHandle] {
                record.intervalUnits = body.connectionInterval
                record.latency = body.peripheralLatency
                record.timeoutUnits = body.supervisionTimeout
                connections[body.connectionHandle] = record
                logger.debug("connection parameters updated", metadata: [
                    "handle": "\(body.connectionHandle)", "intervalMs": "\(Double(body.connectionInterval) * 1.25)"])
            }
            let previous = connectionUpdates[body.connectionHandle]?.count ?? 0
            connectionUpdates[body.connectionHandle] = (previous + 1, body.status)
            for waiter in (connectionUpdateWaiters.removeValue(forKey: body.connectionHandle) ?? [:]).values {
                waiter.resume(returning: body.status)
            }
        case let .remoteConnectionParameterRequest(body):
            answerRemoteParameterRequest(body)
        case let .unknown(subevent, _):
            counters.unknown += 1
            logger.debug("unhandled LE meta event", metadata: ["subevent": "\(subevent)"])
        }
    }

    /// Ends a link: fails its ATT request, finishes its streams, returns its ACL credits and
    /// drops its queued packets (the controller flushed them, Vol 4, Part E, 4.1.1).
    func linkDown(handle: UInt16, reason: LinkEnd) {
        guard let record = connections.removeValue(forKey: handle) else { return }
        inbound.removeAll { $0.handle == handle }
        counters.closed += 1
        aclCredits.disconnected(handle: handle)
        if aclQueue[aclQueueHead...].contains(where: { $0.handle == handle }) {
            aclQueue = aclQueue[aclQueueHead...].filter { $0.handle != handle }
            aclQueueHead = 0
        }
        record.bearer.close()
        record.link.markDown(reason)
        connectionUpdates[handle] = nil
        for waiter in (connectionUpdateWaiters.removeValue(forKey: handle) ?? [:]).values {
            waiter.resume(returning: reason.status)
        }
        logger.info("disconnected", metadata: ["handle": "\(handle)", "peer": "\(record.connection.peer)", "reason": "\(reason)"])
        if connections.isEmpty { resumeLinksClosedWaiters() }
        pumpACL()
    }

    func resumeLinksClosedWaiters() {
        let waiters = linksClosedWaiters
        linksClosedWaiters = []
        for waiter in waiters { waiter.resume() }
    }
}
