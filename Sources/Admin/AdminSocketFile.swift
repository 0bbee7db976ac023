#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The admin socket's file: what is there before binding, and its mode and group after.
public enum AdminSocketFile {
    public enum Probe: Equatable, Sendable {
        case absent
        /// A socket file nobody answers on: left by a crash, safe to replace.
        case stale
        /// Something accepted a connection: another daemon is serving.
        case live
        /// A file that is not a socket: never removed.
        case notASocket
    }

    /// Looks at `path` and, for a socket, tries to connect to it.
    public static func probe(_ path: String) -> Probe {
        var info = stat()
        guard lstat(path, &info) == 0 else { return .absent }
        guard info.st_mode & S_IFMT == S_IFSOCK else { return .notASocket }
        switch UnixSocket.connect(path: path) {
        case .success(let fd):
            close(fd)
            return .live
        case .failure(let error) where error.code == ECONNREFUSED: return .stale
        case .failure(let error) where error.code == ENOENT: return .absent
        case .failure: return .live // EACCES and the like: someone else's socket; do not steal it
        }
    }

    /// Makes `path` free to bind: removes a stale socket, refuses a live one or a non-socket.
    public static func prepare(_ path: String) throws(AdminSetupError) -> Probe {
        let found = probe(path)
        switch found {
        case .absent: break
        case .stale:
            guard unlink(path) == 0 || errno == ENOENT else {
                throw AdminSetupError("admin socket \(path): cannot remove the stale socket (\(String(cString: strerror(errno))))")
            }
        case .live:
            throw AdminSetupError("admin socket \(path) is in use: another gyrogate (or another program) answers on it; stop it or choose another admin.socketPath")
        case .notASocket:
            throw AdminSetupError("admin socket \(path) exists and is not a socket; refusing to replace it")
        }
        return found
    }

    /// Applies the configured mode and, when named, the group.
    public static func secure(_ path: String, mode: Int, group: String?) throws(AdminSetupError) {
        if let group {
            guard let entry = SystemGroups.lookup(group) else { throw AdminSetupError("admin.group: there is no group \"\(group)\"") }
            guard chown(path, uid_t.max, entry.gid) == 0 else {
                throw AdminSetupError("admin socket \(path): chown to group \(group) failed (\(String(cString: strerror(errno))))")
            }
        }
        guard chmod(path, mode_t(mode)) == 0 else {
            throw AdminSetupError("admin socket \(path): chmod \(String(mode, radix: 8)) failed (\(String(cString: strerror(errno))))")
        }
    }
}

/// Blocking POSIX unix-socket helpers shared by the probe and the client.
public enum UnixSocket {
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var code: Int32
        public var operation: String
        public var description: String { "\(operation): \(String(cString: strerror(code)))" }
    }

    /// A connected `SOCK_STREAM` descriptor, or the errno of `socket`/`connect`.
    public static func connect(path: String) -> Result<Int32, Failure> {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { return .failure(Failure(code: ENAMETOOLONG, operation: "connect")) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        #if canImport(Glibc)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)
        #endif
        guard fd >= 0 else { return .failure(Failure(code: errno, operation: "socket")) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            return .failure(Failure(code: code, operation: "connect"))
        }
        return .success(fd)
    }
}
