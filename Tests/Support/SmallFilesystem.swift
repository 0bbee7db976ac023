import Foundation

/// A tmpfs of a given size mounted for one test, so that "disk full" is the kernel's ENOSPC and
/// not a simulation. Needs the right to mount (root in the sandbox and in CI); ``init(bytes:)``
/// throws ``SmallFilesystem/Unavailable`` where mounting is refused, for the test to skip.
public final class SmallFilesystem: @unchecked Sendable {
    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String
    }

    public let path: String
    private let filler: String

    public init(bytes: Int) throws {
        path = NSTemporaryDirectory() + "gyrogate-smallfs-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        filler = path + "/filler"
        let mount = try ChildProcess("/bin/mount", ["-t", "tmpfs", "-o", "size=\(bytes)", "tmpfs", path])
        guard mount.wait(timeout: 10) == 0 else {
            try? FileManager.default.removeItem(atPath: path)
            throw Unavailable(description: "cannot mount a tmpfs at \(path) (needs root or CAP_SYS_ADMIN): the disk-full test is skipped")
        }
    }

    /// Bytes still free.
    public var freeBytes: Int {
        var fs = statvfs()
        return statvfs(path, &fs) == 0 ? Int(fs.f_bavail) * Int(fs.f_frsize) : 0
    }

    /// Takes all free space but `leaving` bytes into a filler file.
    public func fill(leaving: Int = 0) {
        let fd = open(filler, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let block = [UInt8](repeating: 0xAB, count: 64 << 10)
        while freeBytes > leaving {
            let size = min(block.count, max(4096, freeBytes - leaving))
            if block.withUnsafeBytes({ write(fd, $0.baseAddress, size) }) <= 0 { break }
        }
    }

    /// Gives the filler's space back.
    public func unfill() { unlink(filler) }

    deinit {
        _ = try? ChildProcess("/bin/umount", ["-l", path]).wait(timeout: 10)
        try? FileManager.default.removeItem(atPath: path)
    }
}
