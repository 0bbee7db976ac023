/// Loggers and the log download (protocol reference, sections 9.2 to 9.7).
extension Logging {
    public enum ReadoutRegister {
        public static let readout: UInt8 = 0x06
        public static let readoutNotify: UInt8 = 0x07
        public static let readoutProgress: UInt8 = 0x08
        public static let readoutPageConfirm: UInt8 = 0x0E
        public static let removeEntries: UInt8 = 0x09
    }

    /// Log entries hold 4 data bytes each: a signal slice `[offset, offset + length)` of one source.
    public struct Trigger: Hashable, Sendable, CustomStringConvertible {
        public var module: UInt8
        public var register: UInt8
        public var dataID: UInt8
        public var offset: UInt8
        public var length: UInt8

        public init(module: UInt8, register: UInt8, dataID: UInt8 = 0xFF, offset: UInt8, length: UInt8) {
            self.module = module
            self.register = register
            self.dataID = dataID
            self.offset = offset
            self.length = length
        }

        /// `((length − 1) << 5) | offset`.
        public var info: UInt8 { (length &- 1) << 5 | (offset & 0x1F) }

        /// From `0b 82 <mod> <reg> <data id> <info>`; `nil` for an empty slot.
        public init?(readAnswer bytes: ArraySlice<UInt8>) {
            guard bytes.count == 6 else { return nil }
            let start = bytes.startIndex
            module = bytes[start + 2]
            register = bytes[start + 3]
            dataID = bytes[start + 4]
            offset = bytes[start + 5] & 0x1F
            length = (bytes[start + 5] >> 5) + 1
        }

        /// The two slices of a 6-byte three-axis sample (x, y, then z), as the SDK logs them.
        public static func threeAxis(module: MetaWearModuleID, dataRegister: UInt8) -> [Trigger] {
            [Trigger(module: module.rawValue, register: dataRegister, offset: 0, length: 4),
             Trigger(module: module.rawValue, register: dataRegister, offset: 4, length: 2)]
        }

        public var description: String { Hex.bytes([module, register, dataID, info]) }
    }

    /// `0b 02 <mod> <reg> <data id> <info>`: create a logger; the board answers `0b 02 <id>`.
    public static func createLogger(_ trigger: Trigger) -> MetaWearCommand {
        MetaWearCommand(module: .logging, register: Register.trigger,
                        payload: [trigger.module, trigger.register, trigger.dataID, trigger.info])
    }

    /// `0b 82 <slot>`: what logger `slot` records (to find loggers an earlier process created).
    public static func readLogger(slot: UInt8) -> MetaWearCommand {
        MetaWearCommand(module: .logging, register: MetaWearRegister.read(Register.trigger), payload: [slot])
    }

    /// The notifications a download needs: entries, progress, and on revision 2 page completion.
    public static func enableReadoutNotifications(moduleRevision: UInt8) -> [MetaWearCommand] {
        var commands = [MetaWearCommand(module: .logging, register: ReadoutRegister.readoutProgress, payload: [0x01])]
        if moduleRevision == 2 {
            commands.append(MetaWearCommand(module: .logging, register: Register.readoutPageCompleted, payload: [0x01]))
        }
        commands.append(MetaWearCommand(module: .logging, register: ReadoutRegister.readoutNotify, payload: [0x01]))
        return commands
    }

    /// `0b 06 <count u32> <progress every u32>`: send the `count` oldest entries.
    public static func readout(count: UInt32, progressEvery: UInt32) -> MetaWearCommand {
        MetaWearCommand(module: .logging, register: ReadoutRegister.readout, payload: littleEndian(count) + littleEndian(progressEvery))
    }

    /// `0b 0e`: the host took a page; without it a revision 2 board stops the readout.
    public static func confirmPage() -> MetaWearCommand {
        MetaWearCommand(module: .logging, register: ReadoutRegister.readoutPageConfirm)
    }

    /// `0b 09 <count u32>`: remove the `count` oldest entries (rev 2 boards want `0b 0d 01` first).
    public static func removeEntries(count: UInt32, moduleRevision: UInt8) -> [MetaWearCommand] {
        let remove = MetaWearCommand(module: .logging, register: ReadoutRegister.removeEntries, payload: littleEndian(count))
        guard moduleRevision == 2 else { return [remove] }
        return [MetaWearCommand(module: .logging, register: Register.readoutPageCompleted, payload: [0x01]), remove]
    }

    private static func littleEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)]
    }

    /// One 9-byte readout entry: `[id | reset_uid << 5] [tick u32] [data 4]`.
    public struct Entry: Hashable, Sendable {
        public var id: UInt8
        public var resetUID: UInt8
        public var tick: UInt32
        public var data: UInt32

        public init(id: UInt8, resetUID: UInt8, tick: UInt32, data: UInt32) {
            self.id = id
            self.resetUID = resetUID
            self.tick = tick
            self.data = data
        }

        /// The entries of a `0b 07` notification (1 or 2); `nil` when it is not 2 + 9k bytes, k = 1 or 2.
        public static func parse(_ bytes: ArraySlice<UInt8>) -> [Entry]? {
            let body = bytes.dropFirst(2)
            guard body.count == 9 || body.count == 18 else { return nil }
            var entries: [Entry] = []
            var at = body.startIndex
            while at < body.endIndex {
                let head = body[at]
                let tick = UInt32(body[at + 1]) | UInt32(body[at + 2]) << 8 | UInt32(body[at + 3]) << 16 | UInt32(body[at + 4]) << 24
                let data = UInt32(body[at + 5]) | UInt32(body[at + 6]) << 8 | UInt32(body[at + 7]) << 16 | UInt32(body[at + 8]) << 24
                entries.append(Entry(id: head & 0x1F, resetUID: head >> 5 & 0x07, tick: tick, data: data))
                at += 9
            }
            return entries
        }
    }
}
