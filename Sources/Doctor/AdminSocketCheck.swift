import Admin
import GatewayConfig
import Glibc
import TextTools

/// The admin socket can be created where configured (its directory exists or can be created,
/// and is writable; nothing but a socket is in the way), its group exists and can be given,
/// and its mode fits `admin.group` / `admin.allowedGroups`.
enum AdminSocketCheck {
    static func run(_ settings: AdminSettings) -> [CheckResult] {
        let path = settings.socketPath
        let parent = PathText.parent(of: path)
        let folder = parent.isEmpty ? "." : parent
        var notes: [String] = []
        switch DirectoryProbe.check(folder) {
        case .writable: notes.append("\(folder) is writable")
        case .creatable(let ancestor): notes.append("\(folder) is created at start (\(ancestor) is writable)")
        case .notADirectory: return [.problem("admin socket", .adminDirectoryNotADirectory(path: folder))]
        case .cannotBeCreated(let reason): return [.problem("admin socket", .adminDirectoryCannotBeCreated(path: folder, reason: reason))]
        case .notWritable(let reason): return [.problem("admin socket", .adminDirectoryNotWritable(path: folder, reason: reason))]
        }
        switch AdminSocketFile.probe(path) {
        case .absent: break
        case .stale: notes.append("a stale socket is replaced at start")
        case .live: notes.append("a gyrogate (or another program) answers on it now")
        case .notASocket: return [.problem("admin socket", .adminSocketNotASocket(path: path))]
        }

        var problems: [DoctorProblem] = []
        var groupId: gid_t?
        if let group = settings.group {
            if let id = groupIdentifier(group) {
                groupId = id
                if !mayChown(to: id) { problems.append(.adminGroupNotOwned(group: group)) }
            } else {
                problems.append(.adminGroupUnknown(key: "admin.group", group: group))
            }
        }
        for group in settings.allowedGroups where groupIdentifier(group) == nil {
            problems.append(.adminGroupUnknown(key: "admin.allowedGroups", group: group))
        }
        problems += modeProblems(mode: settings.mode, group: settings.group, allowedUids: settings.allowedUids, allowedGroups: settings.allowedGroups)
        if !problems.isEmpty { return problems.map { .problem("admin socket", $0) } }

        notes.append("mode \(octal(settings.mode))" + (settings.group.map { ", group \($0)" + (groupId.map { " (\($0))" } ?? "") } ?? ""))
        if !settings.allowedUids.isEmpty || !settings.allowedGroups.isEmpty {
            let who = settings.allowedUids.map { "uid \($0)" } + settings.allowedGroups.map { "group \($0)" }
            notes.append("POST/DELETE for \(who.joined(separator: ", "))")
        }
        return [.ok("admin socket", "\(path): " + notes.joined(separator: "; "))]
    }

    /// Whether the mode makes sense for who is meant to use the socket (connecting to a unix
    /// socket needs write permission on it).
    static func modeProblems(mode: Int, group: String?, allowedUids: [UInt32], allowedGroups: [String]) -> [DoctorProblem] {
        var problems: [DoctorProblem] = []
        if mode & 0o200 == 0 { problems.append(.adminOwnerCannotConnect(mode: mode)) }
        if let group, mode & 0o020 == 0 { problems.append(.adminGroupWithoutAccess(group: group, mode: mode)) }
        let othersMayConnect = mode & 0o002 != 0
        if !allowedGroups.isEmpty, !othersMayConnect {
            let groupMayConnect = mode & 0o020 != 0 && group.map(allowedGroups.contains) == true
            if !groupMayConnect { problems.append(.adminAllowedGroupsLockedOut(groups: allowedGroups, mode: mode)) }
        }
        if othersMayConnect, allowedUids.isEmpty, allowedGroups.isEmpty {
            problems.append(.adminOpenToEveryone(mode: mode))
        }
        return problems
    }

    static func groupIdentifier(_ name: String) -> gid_t? {
        var entry = group(), result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        guard getgrnam_r(name, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return entry.gr_gid
    }

    /// `chown(path, -1, gid)` by the socket's owner succeeds for root or a member of `gid`.
    static func mayChown(to gid: gid_t) -> Bool {
        if geteuid() == 0 || getegid() == gid { return true }
        let count = getgroups(0, nil)
        guard count > 0 else { return false }
        var groups = [gid_t](repeating: 0, count: Int(count))
        let filled = getgroups(count, &groups)
        return filled > 0 && groups.prefix(Int(filled)).contains(gid)
    }
}
