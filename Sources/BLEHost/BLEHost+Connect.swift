import BluetoothWire
import HCI

extension BLEHost {
    struct PendingConnect {
        let id: UInt64
        let address: BluetoothAddress
        let continuation: CheckedContinuation<LEConnection, any Error>
        /// Set when the attempt is being cancelled: the error to report when the controller
        /// confirms with LE Connection Complete status 0x02.
        var cancellation: BLEHostError?
    }

    /// Connects to a peripheral as central (LE Create Connection, Vol 4, Part E, 7.8.12).
    ///
    /// Attempts run one at a time (the controller has one initiator), in call order; the
    /// `timeout` runs from the moment the attempt starts. On timeout or task cancellation the
    /// attempt is cancelled with LE Create Connection Cancel.
    ///
    /// - throws: ``BLEHostError/connectTimeout(address:after:)``, ``BLEHostError/connectFailed(address:status:)``,
    ///   ``BLEHostError/cancelled``, ``BLEHostError/tooManyConnections(limit:)``, ``BLEHostError/alreadyConnected(_:handle:)``.
    public func connect(to address: BluetoothAddress, addressType: BluetoothAddressType,
                        timeout: Duration = .seconds(10)) async throws -> LEConnection {
        try checkReady()
        await acquireInitiator()
        defer { releaseInitiator() }
        try checkReady()
        try Task.checkCancellation()
        if let (handle, _) = connections.first(where: { $0.value.connection.peer == address }) {
            throw BLEHostError.alreadyConnected(address, handle: handle)
        }
        guard connections.count < configuration.maximumConnections else {
            throw BLEHostError.tooManyConnections(limit: configuration.maximumConnections)
        }
        let parameters = try ConnectionParameters.range(
            minIntervalMs: configuration.connectionIntervalMinMs, maxIntervalMs: configuration.connectionIntervalMaxMs,
            latency: configuration.peripheralLatency, supervisionTimeoutMs: configuration.supervisionTimeoutMs)
        let command = LECreateConnectionCommand(
            leScanInterval: 0x0060, leScanWindow: 0x0060, peerAddressType: addressType, peerAddress: address,
            ownAddressType: configuration.ownAddressType, connectionParameters: parameters)
        nextWaiterID += 1
        let id = nextWaiterID
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<LEConnection, any Error>) in
                pendingConnect = PendingConnect(id: id, address: address, continuation: continuation)
                enqueue(command, timeout: configuration.commandTimeout) { [weak self] result in
                    Task { await self?.createConnectionAnswered(id: id, result: result) }
                }
                after(timeout) { $0.cancelConnect(id: id, because: .connectTimeout(address: address, after: timeout)) }
            }
        } onCancel: {
            Task { [weak self] in await self?.cancelConnect(id: id, because: .cancelled) }
        }
    }

    private func createConnectionAnswered(id: UInt64, result: Result<CommandResponse, BLEHostError>) {
        guard let pending = pendingConnect, pending.id == id else { return }
        let failure: BLEHostError
        switch result {
        case let .success(response):
            guard let status = response.status, !status.isSuccess else { return }
            failure = .connectFailed(address: pending.address, status: status)
        case let .failure(error):
            failure = error
        }
        pendingConnect = nil
        pending.continuation.resume(throwing: failure)
    }

    /// Cancels attempt `id` if it is still pending; the controller's LE Connection Complete
    /// (status 0x02) ends it. A controller that never confirms is given two seconds.
    func cancelConnect(id: UInt64, because reason: BLEHostError) {
        guard var pending = pendingConnect, pending.id == id, pending.cancellation == nil else { return }
        pending.cancellation = reason
        pendingConnect = pending
        logger.info("cancelling connection attempt", metadata: ["peer": "\(pending.address)", "why": "\(reason)"])
        sendCommandIgnoringResult(LECreateConnectionCancelCommand())
        after(.seconds(2)) { $0.abandonConnect(id: id) }
    }

    private func abandonConnect(id: UInt64) {
        guard let pending = pendingConnect, pending.id == id else { return }
        pendingConnect = nil
        pending.continuation.resume(throwing: pending.cancellation ?? .cancelled)
    }

    func connectionCompleted(status: HCIStatus, handle: UInt16, role: UInt8, peer: BluetoothAddress,
                             peerType: BluetoothAddressType, interval: UInt16, latency: UInt16, timeout: UInt16) {
        guard status.isSuccess else {
            if let pending = pendingConnect {
                pendingConnect = nil
                pending.continuation.resume(throwing: pending.cancellation ?? .connectFailed(address: pending.address, status: status))
            } else {
                counters.unknown += 1
            }
            return
        }
        if let stale = connections[handle] {
            // The controller reuses a handle we still hold: the old link must be gone.
            logger.warning("handle reused before Disconnection Complete", metadata: ["handle": "\(handle)"])
            _ = stale
            linkDown(handle: handle, reason: .controller(.connectionTimeout))
        }
        let link = LinkState()
        let bearer = ATTBearer(requestTimeout: configuration.attRequestTimeout, loop: transport.loop) { [weak self] bytes in
            guard let self else { throw BLEHostError.notReady(state: "stopped") }
            try await self.sendL2CAP(handle: handle, channel: .att, payload: bytes)
        }
        let connection = LEConnection(handle: handle, peer: peer, peerAddressType: peerType,
                                      gatt: GATTClient(bearer: bearer), link: link, host: self)
        connections[handle] = ConnectionRecord(
            connection: connection, bearer: bearer, link: link, peerAddressType: peerType,
            intervalUnits: interval, latency: latency, timeoutUnits: timeout)
        inbound.append(Inbound(handle: handle,
                               reassembler: ACLReassembler(maximumFrameLength: configuration.maximumL2CAPFrameLength),
                               bearer: bearer))
        counters.opened += 1
        logger.info("connected", metadata: ["handle": "\(handle)", "peer": "\(peer)", "role": "\(role)",
                                             "intervalMs": "\(Double(interval) * 1.25)"])
        if let pending = pendingConnect {
            pendingConnect = nil
            if pending.address != peer {
                logger.warning("connected to another address than asked", metadata: ["asked": "\(pending.address)", "got": "\(peer)"])
            }
            pending.continuation.resume(returning: connection)
        }
    }

    // MARK: - Used by LEConnection

    func disconnect(handle: UInt16, link: LinkState) async {
        guard let record = connections[handle], record.link === link else { return }
        do {
            try await executeStatus(DisconnectCommand(connectionHandle: handle, reason: .remoteUserTerminatedConnection))
        } catch {
            // The controller refused or never answered: it no longer has this link in any
            // state we can use. End it here so nothing waits forever.
            logger.warning("Disconnect failed; dropping the link locally", metadata: ["handle": "\(handle)", "error": "\(error)"])
            if connections[handle]?.link === link { linkDown(handle: handle, reason: .controller(.connectionTerminatedByLocalHost)) }
            return
        }
        after(.seconds(6)) { $0.forceDown(handle: handle, link: link) }
    }

    private func forceDown(handle: UInt16, link: LinkState) {
        guard connections[handle]?.link === link else { return }
        logger.warning("no Disconnection Complete 6 s after Disconnect; dropping the link locally", metadata: ["handle": "\(handle)"])
        linkDown(handle: handle, reason: .controller(.connectionTerminatedByLocalHost))
    }

    func updateConnection(handle: UInt16, link: LinkState, parameters: LEConnectionParameterRange) async throws {
        guard connections[handle]?.link === link else {
            throw BLEHostError.disconnected(handle: handle, reason: link.reason ?? .unknownConnectionIdentifier)
        }
        let before = connectionUpdates[handle]?.count ?? 0
        try await executeStatus(LEConnectionUpdateCommand(connectionHandle: handle, connectionParameters: parameters))
        let status: HCIStatus
        if let update = connectionUpdates[handle], update.count > before {
            status = update.status
        } else {
            guard connections[handle]?.link === link else {
                throw BLEHostError.disconnected(handle: handle, reason: link.reason ?? .unknownConnectionIdentifier)
            }
            nextWaiterID += 1
            let id = nextWaiterID
            after(.seconds(10)) { $0.expireUpdateWaiter(handle: handle, id: id) }
            status = await withCheckedContinuation { connectionUpdateWaiters[handle, default: [:]][id] = $0 }
        }
        guard link.isConnected else { throw BLEHostError.disconnected(handle: handle, reason: link.reason ?? status) }
        guard status.isSuccess else { throw BLEHostError.commandFailed(opcode: .leConnectionUpdate, status: status) }
    }

    private func expireUpdateWaiter(handle: UInt16, id: UInt64) {
        connectionUpdateWaiters[handle]?.removeValue(forKey: id)?.resume(returning: .llResponseTimeout)
    }
}
