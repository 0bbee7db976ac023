#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Who is on the other end of an accepted unix socket: `SO_PEERCRED`, as the kernel recorded
/// it at `connect`, so it cannot be forged by the client.
public struct PeerCredentials: Sendable, Equatable, CustomStringConvertible {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32

    public init(pid: Int32, uid: UInt32, gid: UInt32) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    public var description: String { "uid=\(uid) gid=\(gid) pid=\(pid)" }
}

/// Who may call mutating endpoints. Empty lists mean "anyone who can open the socket".
public struct AdminAccessPolicy: Sendable {
    public var allowedUids: Set<UInt32>
    /// Resolved group ids and the member names each lists (for supplementary membership).
    var allowedGroups: [(gid: UInt32, members: Set<String>)]

    public init(allowedUids: [UInt32] = [], allowedGroups: [String] = []) throws(AdminSetupError) {
        self.allowedUids = Set(allowedUids)
        var groups: [(UInt32, Set<String>)] = []
        for name in allowedGroups {
            guard let entry = SystemGroups.lookup(name) else { throw AdminSetupError("admin.allowedGroups: there is no group \"\(name)\"") }
            groups.append(entry)
        }
        self.allowedGroups = groups
    }

    public var isRestricted: Bool { !allowedUids.isEmpty || !allowedGroups.isEmpty }

    public func permits(_ peer: PeerCredentials?) -> Bool {
        guard isRestricted else { return true }
        guard let peer else { return false }
        if allowedUids.contains(peer.uid) { return true }
        if allowedGroups.contains(where: { $0.gid == peer.gid }) { return true }
        guard let user = SystemGroups.userName(uid: peer.uid) else { return false }
        return allowedGroups.contains { $0.members.contains(user) }
    }
}

/// `/etc/group` and `/etc/passwd` through the C library (NSS).
enum SystemGroups {
    static func lookup(_ name: String) -> (gid: UInt32, members: Set<String>)? {
        var entry = group(), result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        guard getgrnam_r(name, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        var members: Set<String> = []
        var cursor = entry.gr_mem
        while let member = cursor?.pointee {
            members.insert(String(cString: member))
            cursor = cursor?.advanced(by: 1)
        }
        return (entry.gr_gid, members)
    }

    static func userName(uid: UInt32) -> String? {
        var entry = passwd(), result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return String(cString: entry.pw_name)
    }
}

/// A problem setting the admin socket up (a live daemon already on it, an unknown group, …).
public struct AdminSetupError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
