import GatewayConfig
import Glibc
import GyroStore
import TextTools

/// The data directory is writable (`data directory`) and its filesystem has room for the store
/// to grow to `retention.maxStoreBytes` (`disk space`).
enum StorageCheck {
    static func run(_ configuration: GatewayConfiguration) -> [CheckResult] {
        let path = configuration.dataDirectory
        let measured: String
        var results: [CheckResult] = []
        switch DirectoryProbe.check(path) {
        case .writable:
            measured = path
            results.append(.ok("data directory", "\(path) is writable (probe file created, synced and removed)"))
        case .creatable(let ancestor):
            measured = ancestor
            results.append(.ok("data directory", "\(path) does not exist yet; gyrogate creates it (\(ancestor) is writable)"))
        case .notADirectory:
            return [.problem("data directory", .dataDirectoryNotADirectory(path: path))]
        case .cannotBeCreated(let reason):
            return [.problem("data directory", .dataDirectoryCannotBeCreated(path: path, reason: reason))]
        case .notWritable(let reason):
            return [.problem("data directory", .dataDirectoryNotWritable(path: path, reason: reason))]
        }
        results.append(diskSpace(measured: measured, dataDirectory: path, maxStoreBytes: configuration.retention.maxStoreBytes))
        results.append(FlashWearCheck.run(configuration, measured: measured))
        return results
    }

    /// Warns when the free space is less than what the store may still grow by.
    static func diskSpace(measured: String, dataDirectory: String, maxStoreBytes: Int) -> CheckResult {
        var info = statvfs()
        guard statvfs(measured, &info) == 0 else {
            return .problem("disk space", .diskSpaceUnknown(path: measured, reason: DirectoryProbe.errorText(errno)))
        }
        let free = Int64(clamping: UInt64(info.f_bavail).multipliedReportingOverflow(by: UInt64(info.f_frsize)).partialValue)
        let store = storeBytes(dataDirectory)
        let growth = Int64(maxStoreBytes) - store
        if free < growth {
            return .problem("disk space", .lowDiskSpace(path: dataDirectory, freeBytes: free, storeBytes: store, maxStoreBytes: maxStoreBytes))
        }
        return .ok("disk space", "\(formatBytes(free)) free; the store uses \(formatBytes(store)) of retention.maxStoreBytes \(formatBytes(Int64(maxStoreBytes)))")
    }

    /// The store file with its WAL and shared-memory files.
    static func storeBytes(_ directory: String) -> Int64 {
        let base = PathText.appending(GyroStore.fileName, to: directory)
        return [base, base + "-wal", base + "-shm"].reduce(0) { total, file in
            var info = stat()
            return stat(file, &info) == 0 ? total + Int64(info.st_size) : total
        }
    }
}
