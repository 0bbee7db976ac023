import FoundationEssentials
import Glibc
import TextTools

/// Whether the gateway can write in a directory, found by writing there: `access(2)` says yes
/// to root on a read-only filesystem and ignores ACLs, a probe file does not.
enum DirectoryProbe {
    enum Finding: Equatable {
        /// The directory exists and a probe file was created, synced and removed.
        case writable
        /// It does not exist; `ancestor`, the nearest existing folder, is writable, so it can be created.
        case creatable(ancestor: String)
        /// It exists and is not a directory.
        case notADirectory
        /// It does not exist and cannot be created.
        case cannotBeCreated(reason: String)
        /// It exists but the probe file could not be written.
        case notWritable(reason: String)
    }

    static func check(_ path: String) -> Finding {
        var info = stat()
        if stat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else { return .notADirectory }
            return writeProbe(in: path).map { .notWritable(reason: $0) } ?? .writable
        }
        let code = errno
        guard code == ENOENT || code == ENOTDIR else { return .notWritable(reason: errorText(code)) }
        // The nearest existing ancestor decides whether the directory can be created.
        var ancestor = PathText.parent(of: path)
        while !ancestor.isEmpty, stat(ancestor, &info) != 0 {
            let parent = PathText.parent(of: ancestor)
            if parent == ancestor { break }
            ancestor = parent
        }
        if ancestor.isEmpty { ancestor = "." }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            return .cannotBeCreated(reason: "\(ancestor) is not a directory (ENOTDIR)")
        }
        if let failure = writeProbe(in: ancestor) { return .cannotBeCreated(reason: "cannot write in \(ancestor): \(failure)") }
        return .creatable(ancestor: ancestor)
    }

    /// Creates, fsyncs and deletes a probe file in `directory`; returns why that failed.
    static func writeProbe(in directory: String) -> String? {
        let path = PathText.appending(".gyrogate-doctor-\(getpid())-\(UInt32.random(in: 0...UInt32.max))", to: directory)
        let descriptor = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return "create \(path): \(errorText(errno))" }
        defer { unlink(path) }
        let bytes = Array("gyrogate doctor\n".utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        let writeError = written == bytes.count ? nil : (written < 0 ? errorText(errno) : "short write")
        let syncError = fsync(descriptor) == 0 ? nil : errorText(errno)
        let closeError = close(descriptor) == 0 ? nil : errorText(errno)
        if let writeError { return "write \(path): \(writeError)" }
        if let syncError { return "fsync \(path): \(syncError)" }
        if let closeError { return "close \(path): \(closeError)" }
        return nil
    }

    static func errorText(_ code: Int32) -> String {
        "\(String(cString: strerror(code))) (errno \(code))"
    }

    /// A file operation's error as `errorText` words it, when it carries an errno.
    static func errorText(_ error: any Error) -> String {
        if let error = error as? CocoaError, let posix = error.underlying as? POSIXError { return errorText(posix.code.rawValue) }
        if let posix = error as? POSIXError { return errorText(posix.code.rawValue) }
        return "\(error)"
    }
}
