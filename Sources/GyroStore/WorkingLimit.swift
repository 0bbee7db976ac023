/// What retention keeps the store's live pages under (``GyroStore/usedBytes()``), and which
/// bound set it: `retention.maxStoreBytes`, or the disk when it has less room.
///
/// The disk's room is what the store's file may still grow by while the reserve's worth stays
/// free: `free + reserve's blocks − reserve's size`. The reserve is counted once. While it is
/// allocated its blocks are the store's (deleting the file gives them back at once), so the
/// room is the free space itself; once it is released its blocks are part of the free space,
/// and that much must stay free to allocate it again. Subtracting the reserve from the free
/// space while it also held its blocks, as this limit once did, counted it twice: on a nearly
/// full disk the limit fell below the file's size, and retention evicted unpublished chunks the
/// disk still had room for.
///
/// The disk's bound on the live pages is then `file − ring + room`: the file's size (live and
/// free pages and the sample ring's fixed slots) plus the room, less the ring, which
/// ``GyroStore/usedBytes()`` leaves out. It falls below the live pages only when the room is
/// negative by more than the file's free pages: the disk truly has no room for what the store
/// holds (nor for the pages a checkpoint still has to add to the file, which the file's size
/// does not count yet and the live pages do).
public struct WorkingLimit: Sendable, Equatable {
    public enum Bound: String, Sendable {
        /// `retention.maxStoreBytes`: the disk has more room than that.
        case configured
        /// The disk's room: less than `retention.maxStoreBytes` allows.
        case disk
    }

    public var bytes: Int
    public var bound: Bound
    /// Free space plus the reserve's blocks, less the reserve's size; `nil` without a disk (an
    /// in-memory store). Negative when the disk lacks even the reserve's room.
    public var diskRoomBytes: Int?

    public init(bytes: Int, bound: Bound, diskRoomBytes: Int? = nil) {
        self.bytes = bytes
        self.bound = bound
        self.diskRoomBytes = diskRoomBytes
    }

    /// The limit for a store of `maxBytes` on `space` (`nil`: no disk), keeping `reserveBytes`
    /// of room, with a sample ring of `ringBytes`.
    public init(maxBytes: Int, space: StoreSpace?, reserveBytes: Int, ringBytes: Int = 0) {
        guard let space else {
            self.init(bytes: maxBytes, bound: .configured)
            return
        }
        let room = space.freeBytes + space.reserveHeldBytes - reserveBytes
        let disk = space.fileBytes - ringBytes + room
        self.init(bytes: max(0, min(maxBytes, disk)), bound: disk < maxBytes ? .disk : .configured, diskRoomBytes: room)
    }

    /// Whether the disk has room again for the reserve and as much beside it: the full state
    /// ends there, so that it does not end and start again with every few pages written.
    public static func diskHasRoomAgain(_ space: StoreSpace, reserveBytes: Int) -> Bool {
        space.freeBytes + space.reserveHeldBytes - reserveBytes >= reserveBytes
    }
}
