/// Module discovery as the SDK runs it (protocol reference, section 2, step 4).
///
/// A pure state machine: ask ``nextRequest`` for the next `[id, 0x80]` to write, feed each module-info
/// notification to ``handle(_:)``, and stop when ``isComplete``. The SDK sends one request at a time
/// and waits for its answer; timeouts belong to the caller (the SDK allows 150 ms per response).
///
/// For example, a MetaMotion R gets `01 80, 02 80, … , 19 80, fe 80`; then, with logging present, the
/// caller reads the log time (``Logging/readTime()``).
public struct ModuleDiscovery: Sendable {
    /// The ids SDK 0.30.0 queries, in order.
    public static let sdk030ModuleIDs: [MetaWearModuleID] = [
        0x01, 0x02, 0x03, 0x04, 0x05, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0F, 0x11, 0x12, 0x13, 0x14,
        0x15, 0x16, 0x19, 0xFE,
    ].map(MetaWearModuleID.init(rawValue:))

    /// The ids SDK 0.21.0 (PyPI `metawear` 1.0.8) queries: 0.30.0's plus 0x06, 0x10, 0x17, 0x18.
    public static let sdk021ModuleIDs: [MetaWearModuleID] = [
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0F, 0x10, 0x11, 0x12, 0x13,
        0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0xFE,
    ].map(MetaWearModuleID.init(rawValue:))

    /// The read request for one module's info: `[id, 0x80]`.
    public static func request(for id: MetaWearModuleID) -> MetaWearCommand {
        MetaWearCommand(module: id, register: MetaWearRegister.readBit)
    }

    /// Ids still to ask, in order.
    public private(set) var pending: [MetaWearModuleID]
    /// Answers so far (Device Information strings are the caller's to fill in).
    public private(set) var boardInfo: BoardInfo

    /// Starts discovery, skipping ids that `boardInfo` already knows (the SDK's resume behaviour).
    public init(moduleIDs: [MetaWearModuleID] = Self.sdk030ModuleIDs, boardInfo: BoardInfo = BoardInfo()) {
        self.pending = moduleIDs.filter { !boardInfo.isKnown($0) }
        self.boardInfo = boardInfo
    }

    /// All requests still to send, in order.
    public var requests: [MetaWearCommand] { pending.map(Self.request(for:)) }

    /// The request to write next, or `nil` when discovery is complete.
    public var nextRequest: MetaWearCommand? { pending.first.map(Self.request(for:)) }

    public var isComplete: Bool { pending.isEmpty }

    /// Outcome of feeding one answer.
    public enum Outcome: Hashable, Sendable {
        /// The answer for the module currently asked; the next request (if any) may be sent.
        case recorded(MetaWearModuleID)
        /// A valid answer for a module other than the one asked; recorded, but it does not advance
        /// the wait.
        case unexpected(MetaWearModuleID)
    }

    /// Records a parsed answer.
    @discardableResult
    public mutating func record(_ id: MetaWearModuleID, _ info: ModuleInfo?) -> Outcome {
        boardInfo.record(id, info)
        if pending.first == id {
            pending.removeFirst()
            return .recorded(id)
        }
        if let index = pending.firstIndex(of: id) { pending.remove(at: index) }
        return .unexpected(id)
    }

    /// Parses and records a module-info notification.
    @discardableResult
    public mutating func handle(_ notification: [UInt8]) throws(MetaWearPacketError) -> Outcome {
        let (id, info) = try ModuleInfo.parse(notification)
        return record(id, info)
    }
}
