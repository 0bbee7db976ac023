import ATT
import BluetoothWire
import GAP
import HCI
import L2CAP
import Logging
import PosixThreads

/// The LE host (central role): owns one controller through an ``HCITransport``.
///
/// Design overview. One actor per controller holds every piece of protocol state; everything
/// that reacts to the controller runs synchronously inside it, in packet order. The actor runs
/// on its transport's `ThreadExecutor`:
/// - the loop's thread reads and frames packets and calls the dispatch (`BLEHost+Dispatch`)
///   directly, with no task or queue in between;
/// - commands go through `CommandFlow` (credits, per-command deadlines: a controller that
///   never answers fails the command with ``BLEHostError/commandTimeout(opcode:after:)``);
/// - outgoing ACL goes through `ACLCredits` and never exceeds the controller's buffers;
///   L2CAP frames are fragmented to the controller's buffer size (`BLEHost+ACL`);
/// - incoming ACL is reassembled per connection and routed by CID: ATT to the link's
///   `ATTBearer` (no actor hop: notifications are the hot path), LE signalling here;
/// - packets to the controller are written on the same thread, in order (short writes: an
///   HCI packet is a few hundred bytes at most).
///
/// Bad input never stops the host: packets that fail to decode are counted in
/// ``BLEHostStatus/malformedPackets``, unexpected ones in ``BLEHostStatus/unknownPackets``,
/// and dropped. A Disconnection Complete fails the link's pending requests, returns its ACL
/// credits, drops its queued packets and finishes its streams, so a reconnect starts from zero.
/// A lost transport (read or write error, end of stream) ends every link and then the host
/// itself: ``waitUntilEnded()`` returns, and the owner opens a new transport and host.
public actor BLEHost {
    typealias Clock = ContinuousClock

    struct ConnectionRecord {
        let connection: LEConnection
        let bearer: ATTBearer
        let link: LinkState
        let peerAddressType: BluetoothAddressType
        var intervalUnits: UInt16
        var latency: UInt16
        var timeoutUnits: UInt16
        var signalIdentifier: UInt8 = 0
    }

    struct Inbound {
        let handle: UInt16
        var reassembler: ACLReassembler
        let bearer: ATTBearer
    }

    struct Counters {
        var events = 0
        var aclReceived = 0
        var aclSent = 0
        var malformed = 0
        var unknown = 0
        var commandTimeouts = 0
        var reassemblyErrors = 0
        var creditAnomalies = 0
        var opened = 0
        var closed = 0
        var parameterAccepted = 0
        var parameterRejected = 0
    }

    let transport: any HCITransport
    let configuration: BLEHostConfiguration
    let logger: Logger
    let clock = Clock()

    var state: BLEHostStatus.ControllerState = .idle
    var counters = Counters()
    var controllerAddress: BluetoothAddress?
    var randomAddress: BluetoothAddress?

    // Commands.
    var commandFlow = CommandFlow<Clock.Instant>()
    var commandWaiters: [CommandFlow<Clock.Instant>.Token: @Sendable (Result<CommandResponse, BLEHostError>) -> Void] = [:]

    // ACL.
    var aclBufferSize = 27
    var aclCredits = ACLCredits(totalBuffers: 0)
    var aclQueue: [ACLPacket] = []
    var aclQueueHead = 0

    // Links.
    var connections: [UInt16: ConnectionRecord] = [:]
    /// What the data path needs of each link in ``connections``, kept beside it: an ACL packet
    /// finds its link by comparing handles over a few entries, without hashing or copying a
    /// record, and is reassembled in place.
    var inbound: [Inbound] = []
    var connectionUpdateWaiters: [UInt16: [UInt64: CheckedContinuation<HCIStatus, Never>]] = [:]
    var connectionUpdates: [UInt16: (count: Int, status: HCIStatus)] = [:]
    var nextWaiterID: UInt64 = 0
    /// `stop()` waiting for the controller to report every link down.
    var linksClosedWaiters: [CheckedContinuation<Void, Never>] = []

    // Scanning and initiating (one at a time: see `BLEHost+Scan`, `BLEHost+Connect`).
    var scanResults: [BluetoothAddress: Advertisement]?
    var initiatorBusy = false
    var initiatorQueue: [CheckedContinuation<Void, Never>] = []
    var pendingConnect: PendingConnect?

    // I/O.
    var ioStarted = false
    /// Why a write failed; the transport is closed then, and this is the reason given.
    var writeFailure: TransportError?
    nonisolated let ended = HostEndSignal()

    public nonisolated var unownedExecutor: UnownedSerialExecutor { transport.loop.asUnownedSerialExecutor() }

    public init(transport: any HCITransport, configuration: BLEHostConfiguration = .init(), logger: Logger) {
        self.transport = transport
        self.configuration = configuration
        var logger = logger
        logger[metadataKey: "subsystem"] = "ble"
        self.logger = logger
    }

    /// Starts the reader and writer, then initialises the controller: HCI Reset, Read BD_ADDR,
    /// event masks, LE Read Buffer Size (falling back to Read Buffer Size when the LE buffers
    /// are shared), and the static random address when the own address type is random.
    ///
    /// - throws: ``BLEHostError`` naming the command that failed or timed out.
    public func start() async throws {
        guard state == .idle || state == .failed else {
            throw BLEHostError.notReady(state: "start() called while \(state.rawValue)")
        }
        state = .starting
        startIO()
        do {
            try await initialiseController()
            state = .ready
            logger.info("BLE host ready", metadata: [
                "address": "\(controllerAddress.map { "\($0)" } ?? "?")",
                "aclBuffer": "\(aclBufferSize)x\(aclCredits.totalBuffers)",
            ])
        } catch {
            state = .failed
            throw error
        }
    }

    /// Disconnects every link (waiting up to a second for them all), closes the transport and
    /// fails everything pending. The host cannot be started again.
    public func stop() async {
        guard state != .stopped else { return }
        if state == .ready, !connections.isEmpty {
            for (handle, record) in connections where record.link.isConnected {
                sendCommandIgnoringResult(DisconnectCommand(connectionHandle: handle, reason: .remoteUserTerminatedConnection))
            }
            // Resumed by the last Disconnection Complete (`linkDown`) or by this deadline.
            let deadline = after(.seconds(1)) { $0.resumeLinksClosedWaiters() }
            await withCheckedContinuation { linksClosedWaiters.append($0) }
            cancelTimer(deadline)
        }
        state = .stopped
        transport.close()
        transportLost(reason: .controller(.connectionTerminatedByLocalHost))
        ended.finish(.stopped)
    }

    /// Returns when the host has ended: ``BLEHostEnd/transportLost(_:)`` as soon as the transport
    /// fails or closes under a started host (every link is already down by then), or
    /// ``BLEHostEnd/stopped`` after ``stop()``. Returns at once when the host has already ended.
    ///
    /// - throws: `CancellationError` when the calling task is cancelled first.
    public nonisolated func waitUntilEnded() async throws -> BLEHostEnd {
        try await ended.wait()
    }

    public func status() -> BLEHostStatus {
        BLEHostStatus(
            state: state, controllerAddress: controllerAddress, randomAddress: randomAddress,
            aclBufferSize: aclBufferSize, aclBufferCount: aclCredits.totalBuffers,
            aclBuffersAvailable: aclCredits.available,
            connections: connections.keys.sorted().compactMap { handle in
                guard let record = connections[handle] else { return nil }
                let att = record.bearer.counters
                return BLEHostStatus.Connection(
                    handle: handle, peer: record.connection.peer, peerAddressType: record.peerAddressType,
                    intervalMs: Double(record.intervalUnits) * 1.25, latency: record.latency,
                    supervisionTimeoutMs: Double(record.timeoutUnits) * 10,
                    aclInFlight: aclCredits.inFlight(handle: handle),
                    aclQueued: aclQueue[aclQueueHead...].lazy.filter { $0.handle == handle }.count,
                    attMTU: record.bearer.mtu, notificationsReceived: att.notifications,
                    attDropped: att.unexpected + att.malformed)
            },
            isScanning: scanResults != nil, isConnecting: pendingConnect != nil,
            eventsReceived: counters.events, aclPacketsReceived: counters.aclReceived, aclPacketsSent: counters.aclSent,
            malformedPackets: counters.malformed, unknownPackets: counters.unknown,
            commandTimeouts: counters.commandTimeouts, reassemblyErrors: counters.reassemblyErrors,
            creditAnomalies: counters.creditAnomalies, connectionsOpened: counters.opened,
            connectionsClosed: counters.closed, parameterRequestsAccepted: counters.parameterAccepted,
            parameterRequestsRejected: counters.parameterRejected)
    }

    // MARK: - I/O

    /// Starts delivery of the controller's packets to ``dispatch(_:)``, synchronously on the loop.
    func startIO() {
        guard !ioStarted else { return }
        ioStarted = true
        // The transport holds these, and with them the host, until it ends: `stop()` closes it,
        // and a lost transport ends by itself. Not weak: a weakly referenced object gets a side
        // table, which makes every retain and release of the host slower.
        transport.start(receive: { next in
            self.assumeIsolated { host in
                while let packet = next() { host.dispatch(packet) }
                // Each link's notifications of this wake-up, in one call per link.
                for index in host.inbound.indices { host.inbound[index].bearer.flush() }
            }
        }, ended: { error in
            self.assumeIsolated { $0.transportFailed(error) }
        })
    }

    func transportFailed(_ error: TransportError) {
        guard state != .stopped else { return }
        let error = writeFailure ?? error
        logger.error("HCI transport lost", metadata: ["error": "\(error)"])
        state = .failed
        transportLost(reason: .transportLost)
        // After the links are down, so whoever reacts to the end finds them ended.
        ended.finish(.transportLost(error))
    }

    /// Fails every pending command and waiter, and ends every link (the controller is gone).
    func transportLost(reason: LinkEnd) {
        perform(commandFlow.transportLost())
        for handle in Array(connections.keys) {
            linkDown(handle: handle, reason: reason)
        }
        if let pending = pendingConnect {
            pendingConnect = nil
            pending.continuation.resume(throwing: BLEHostError.notReady(state: state.rawValue))
        }
        scanResults = nil
    }

    /// Writes a packet to the controller. A failed write closes the transport; the loop then
    /// reports the end (``transportFailed(_:)``), after the dispatch step that wrote has finished.
    func write(_ packet: H4Packet) {
        guard writeFailure == nil else { return }
        do {
            try transport.send(packet)
        } catch {
            logger.error("HCI write failed", metadata: ["error": "\(error)"])
            writeFailure = error
            transport.close()
        }
    }
}
