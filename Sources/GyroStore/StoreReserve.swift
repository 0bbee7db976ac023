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
    public var isFilled: Bool {
        var info = stat()
        return stat(path, &info) == 0 && Int(info.st_blocks) * 512 >= bytes
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
}

extension GyroStore {
    /// The filesystem's free space and the store file's size, or `nil` for an in-memory store.
    public func space() -> StoreSpace? {
        guard let directory else { return nil }
        var fs = statvfs()
        guard statvfs(directory, &fs) == 0 else { return nil }
        var info = stat()
        let file = stat(Self.filePath(directory, Self.fileName), &info) == 0 ? Int(info.st_size) : 0
        return StoreSpace(freeBytes: Int(fs.f_bavail) * Int(fs.f_frsize), totalBytes: Int(fs.f_blocks) * Int(fs.f_frsize), fileBytes: file)
    }

    /// What the store may hold on the disk it has: the file's pages plus the filesystem's free
    /// space, less the reserve's size (room to allocate it again, or for the WAL to grow while it
    /// is released), and never more than `maxBytes`. Retention prunes to 90 % of this limit, which
    /// leaves free pages inside the file for new samples.
    public func workingLimit() -> Int {
        guard let space = space() else { return maxBytes }
        let room = reserve?.bytes ?? StoreReserve.defaultBytes
        return max(0, min(maxBytes, space.fileBytes + space.freeBytes - room))
    }
}
