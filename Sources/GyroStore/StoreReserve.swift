#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file of allocated blocks beside the store, deleted when the disk fills.
///
/// Why: when the filesystem is full, SQLite cannot even write the transaction that frees space
/// (deleting a chunk document rewrites b-tree and freelist pages through the WAL), nor the session
/// rows that record what could not be kept. Deleting the reserve gives those writes room at once;
/// it is allocated again when free space has come back.
public struct StoreReserve: Sendable {
    public static let fileName = "store.reserve"
    /// Room for several commits of a busy gateway and a retention pass through the WAL.
    public static let defaultBytes = 4 << 20

    public let path: String
    public let bytes: Int

    public init?(directory: String, bytes: Int) {
        guard bytes > 0 else { return nil }
        path = GyroStore.filePath(directory, Self.fileName)
        self.bytes = bytes
    }

    /// Whether the reserve is allocated.
    public var isFilled: Bool { heldBytes >= bytes }

    /// Bytes of disk the reserve's blocks hold now: its size while allocated, 0 once released.
    /// They are room the store can have (deleting the file frees them), counted once: statvfs's
    /// free space does not include them.
    public var heldBytes: Int {
        var info = stat()
        guard stat(path, &info) == 0 else { return 0 }
        return min(bytes, Int(info.st_blocks) * 512)
    }

    /// Allocates the reserve (blocks, not a sparse file); `false` when the disk has no room for it.
    @discardableResult
    public func fill() -> Bool {
        if isFilled { return true }
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        if posix_fallocate(fd, 0, off_t(bytes)) == 0 { return true }
        _ = ftruncate(fd, 0)
        return false
    }

    /// Frees the reserve's blocks.
    public func release() { unlink(path) }
}

/// The data directory's filesystem as statvfs sees it, and the store's file beside it.
public struct StoreSpace: Sendable, Equatable {
    /// Bytes an unprivileged writer may still allocate.
    public var freeBytes: Int
    public var totalBytes: Int
    /// Size of `store.sqlite` (its live and free pages).
    public var fileBytes: Int
    /// Bytes the reserve's blocks hold (``StoreReserve/heldBytes``): 0 while it is released.
    public var reserveHeldBytes: Int

    public init(freeBytes: Int, totalBytes: Int, fileBytes: Int, reserveHeldBytes: Int = 0) {
        self.freeBytes = freeBytes
        self.totalBytes = totalBytes
        self.fileBytes = fileBytes
        self.reserveHeldBytes = reserveHeldBytes
    }
}

extension GyroStore {
    /// The filesystem's free space, the store file's size and the reserve's blocks, or `nil`
    /// for an in-memory store.
    public func space() -> StoreSpace? {
        guard let directory else { return nil }
        var fs = statvfs()
        guard statvfs(directory, &fs) == 0 else { return nil }
        var info = stat()
        let file = stat(Self.filePath(directory, Self.fileName), &info) == 0 ? Int(info.st_size) : 0
        return StoreSpace(freeBytes: Int(fs.f_bavail) * Int(fs.f_frsize), totalBytes: Int(fs.f_blocks) * Int(fs.f_frsize), fileBytes: file,
                          reserveHeldBytes: reserve?.heldBytes ?? 0)
    }

    /// The size the reserve must have on this disk (``StoreReserve/defaultBytes`` when the store
    /// keeps none: the room is kept free all the same).
    public var reserveBytes: Int { reserve?.bytes ?? StoreReserve.defaultBytes }

    /// What retention keeps the store under now (``WorkingLimit``), measured in one read.
    public func workingLimit() async throws(StoreError) -> WorkingLimit {
        let ring = try await read("measuring the store") { db in try Self.ringBytes(db) }
        return WorkingLimit(maxBytes: maxBytes, space: space(), reserveBytes: reserveBytes, ringBytes: ring)
    }

    /// ``workingLimit()`` inside the caller's transaction.
    func workingLimit(in db: SQLiteConnection) throws -> WorkingLimit {
        WorkingLimit(maxBytes: maxBytes, space: space(), reserveBytes: reserveBytes, ringBytes: try Self.ringBytes(db))
    }
}
