import FoundationEssentials
import GatewayConfig
import Glibc
import TextTools
import ZoneInfo

/// Something `gyrogate doctor` found wrong, with what to do about it in one line.
public enum DoctorProblem: Error, Sendable, Equatable, CustomStringConvertible {
    // MARK: Configuration
    case configUnreadable(path: String, reason: String)
    case configNotJSON(path: String, reason: String)
    case configInvalid(path: String, problems: [ConfigProblem])

    // MARK: Transport
    /// `socket(AF_BLUETOOTH)` failed with EAFNOSUPPORT: the kernel has no Bluetooth.
    case bluetoothUnsupported(adapter: Int)
    /// ENODEV: no such adapter; `present` lists the adapters in /sys/class/bluetooth.
    case adapterMissing(adapter: Int, present: [String])
    /// EBUSY: the adapter is up, usually because bluetoothd holds it.
    case adapterBusy(adapter: Int, bluetoothdRunning: Bool)
    /// EUSERS (EALREADY on older kernels): another program (a running gyrogate?) has the adapter's user channel.
    case adapterTaken(adapter: Int)
    /// EPERM/EACCES on the user channel.
    case adapterPermissionDenied(adapter: Int)
    /// `tcp:`: nothing listens there, or the host cannot be resolved or reached.
    case transportUnreachable(transport: String, reason: String)
    /// `serial:`: the device cannot be opened or configured.
    case serialUnavailable(transport: String, device: String, reason: String)
    /// Any other transport failure, with the transport's own description.
    case transportFailed(transport: String, reason: String)

    // MARK: Capabilities
    case capabilitiesMissing(adapter: Int, missing: [String])
    case capabilitiesUnknown(reason: String)

    // MARK: Broker
    case brokerUnreachable(broker: String, reason: String)
    case brokerTLS(broker: String, reason: String)
    case brokerCredentialsRejected(broker: String, username: String?, reason: String)
    case brokerRefused(broker: String, reason: String)
    /// v5 PUBACK reason 135: the broker's ACL does not let this client publish under the prefix.
    case publishNotAuthorized(topic: String, prefix: String, username: String?)
    /// Another v5 PUBACK failure reason.
    case publishRefused(topic: String, reasonCode: Int32, reason: String)
    /// No PUBACK: the publish could not be sent, the connection dropped or the broker did not answer.
    case publishUnacknowledged(topic: String, reason: String)
    /// The broker speaks only MQTT 3.1.1, which acknowledges publishes an ACL drops.
    case aclUnverifiable(topic: String, prefix: String)

    // MARK: Data directory
    case dataDirectoryNotADirectory(path: String)
    case dataDirectoryCannotBeCreated(path: String, reason: String)
    case dataDirectoryNotWritable(path: String, reason: String)
    case lowDiskSpace(path: String, freeBytes: Int64, storeBytes: Int64, maxStoreBytes: Int)
    /// The data directory is on an SD card and the configured load writes more than the daily budget.
    case sdCardWear(path: String, device: String, bytesPerDay: Int64, budgetBytes: Int64)
    case diskSpaceUnknown(path: String, reason: String)

    // MARK: Admin socket
    case adminDirectoryNotADirectory(path: String)
    case adminDirectoryCannotBeCreated(path: String, reason: String)
    case adminDirectoryNotWritable(path: String, reason: String)
    case adminSocketNotASocket(path: String)
    /// `admin.group` or an `admin.allowedGroups` entry names no group.
    case adminGroupUnknown(key: String, group: String)
    /// The daemon's chown to `admin.group` would fail: this user is neither root nor a member.
    case adminGroupNotOwned(group: String)
    /// The mode gives the socket's owner no write permission (needed to connect).
    case adminOwnerCannotConnect(mode: Int)
    /// `admin.group` is set but the mode gives the group no read/write.
    case adminGroupWithoutAccess(group: String, mode: Int)
    /// `admin.allowedGroups` members cannot open the socket: neither the socket's group nor others have access.
    case adminAllowedGroupsLockedOut(groups: [String], mode: Int)
    /// Anyone may open the socket and nothing restricts POST/DELETE.
    case adminOpenToEveryone(mode: Int)

    // MARK: Clock
    case clockImplausible(now: Date)
    /// The kernel says no NTP client keeps the wall clock synchronised (adjtimex: STA_UNSYNC).
    case clockUnsynchronised(now: Date)

    public var severity: CheckStatus {
        switch self {
        case .aclUnverifiable, .lowDiskSpace, .sdCardWear, .diskSpaceUnknown, .capabilitiesUnknown, .adminOwnerCannotConnect, .clockUnsynchronised,
             .adminGroupWithoutAccess, .adminAllowedGroupsLockedOut, .adminOpenToEveryone:
            .warn
        default:
            .fail
        }
    }

    /// What is wrong, naming the file, key, host or errno involved.
    public var problem: String {
        switch self {
        case .configUnreadable(let path, let reason):
            "cannot read \(path): \(reason)"
        case .configNotJSON(let path, let reason):
            "\(path) is not valid JSON: \(reason)"
        case .configInvalid(let path, let problems):
            "\(path): " + problems.map(\.description).joined(separator: "; ")
        case .bluetoothUnsupported(let adapter):
            "hci\(adapter): this kernel has no Bluetooth support (socket(AF_BLUETOOTH) failed: EAFNOSUPPORT, errno \(EAFNOSUPPORT))"
        case .adapterMissing(let adapter, let present):
            "there is no Bluetooth adapter hci\(adapter) (present: \(present.isEmpty ? "none" : present.joined(separator: ", ")))"
        case .adapterBusy(let adapter, let bluetoothdRunning):
            bluetoothdRunning
                ? "hci\(adapter) is up and held by bluetoothd (bind: EBUSY); the HCI user channel needs it down and unused, and bluetoothd may power it up again"
                : "hci\(adapter) is up (bind: EBUSY) and this process cannot bring it down (no CAP_NET_ADMIN); the HCI user channel needs the adapter down"
        case .adapterTaken(let adapter):
            "another program already holds hci\(adapter)'s user channel (bind: EUSERS)"
        case .adapterPermissionDenied(let adapter):
            "not permitted to open hci\(adapter)'s user channel (EPERM)"
        case .transportUnreachable(let transport, let reason):
            "\(transport): \(reason)"
        case .serialUnavailable(let transport, let device, let reason):
            "\(transport): cannot open \(device): \(reason)"
        case .transportFailed(let transport, let reason):
            "\(transport): \(reason)"
        case .capabilitiesMissing(let adapter, let missing):
            "hci\(adapter) needs \(missing.joined(separator: " and ")), which this process does not have (CapEff)"
        case .capabilitiesUnknown(let reason):
            "cannot read this process's capabilities: \(reason)"
        case .brokerUnreachable(let broker, let reason):
            "cannot reach \(broker): \(reason)"
        case .brokerTLS(let broker, let reason):
            "TLS with \(broker) failed: \(reason)"
        case .brokerCredentialsRejected(let broker, let username, let reason):
            "\(broker) refused the credentials (\(username.map { "user \($0)" } ?? "anonymous")): \(reason)"
        case .brokerRefused(let broker, let reason):
            "\(broker) refused the connection: \(reason)"
        case .publishNotAuthorized(let topic, _, let username):
            "the broker's ACL does not let \(username.map { "user \($0)" } ?? "anonymous clients") publish to \(topic) (PUBACK 135 not authorized)"
        case .publishRefused(let topic, let code, let reason):
            "the broker refused a publish to \(topic) (PUBACK \(code) \(reason))"
        case .publishUnacknowledged(let topic, let reason):
            "no PUBACK for a QoS 1 publish to \(topic): \(reason)"
        case .aclUnverifiable(let topic, _):
            "PUBACK for \(topic), but the broker speaks only MQTT 3.1.1, which acknowledges publishes its ACL drops: the ACL cannot be verified"
        case .dataDirectoryNotADirectory(let path):
            "\(path) exists and is not a directory"
        case .dataDirectoryCannotBeCreated(let path, let reason):
            "\(path) does not exist and cannot be created: \(reason)"
        case .dataDirectoryNotWritable(let path, let reason):
            "cannot write in \(path): \(reason)"
        case .lowDiskSpace(let path, let free, let store, let maximum):
            "\(formatBytes(free)) free for \(path), but the store (now \(formatBytes(store))) may grow to retention.maxStoreBytes \(formatBytes(Int64(maximum)))"
        case .sdCardWear(let path, let device, let perDay, let budget):
            "\(path) is on the SD card \(device); the configured sensors would write about \(formatBytes(perDay)) a day to it, "
                + "more than the budget of \(formatBytes(budget)) a day that lets a card last years"
        case .diskSpaceUnknown(let path, let reason):
            "cannot measure the free space of \(path): \(reason)"
        case .adminDirectoryNotADirectory(let path):
            "the admin socket's directory \(path) exists and is not a directory"
        case .adminDirectoryCannotBeCreated(let path, let reason):
            "the admin socket's directory \(path) does not exist and cannot be created: \(reason)"
        case .adminDirectoryNotWritable(let path, let reason):
            "cannot create the admin socket in \(path): \(reason)"
        case .adminSocketNotASocket(let path):
            "\(path) exists and is not a socket; the daemon refuses to replace it"
        case .adminGroupUnknown(let key, let group):
            "\(key): there is no group \"\(group)\""
        case .adminGroupNotOwned(let group):
            "admin.group is \"\(group)\" but this user is neither root nor a member, so the daemon's chown of the socket will fail (EPERM)"
        case .adminOwnerCannotConnect(let mode):
            "admin.mode \(octal(mode)) gives the socket's owner no write permission, so the gateway's own user cannot connect"
        case .adminGroupWithoutAccess(let group, let mode):
            "admin.group is \"\(group)\" but admin.mode \(octal(mode)) gives the group no read/write access"
        case .adminAllowedGroupsLockedOut(let groups, let mode):
            "admin.allowedGroups \(groups.joined(separator: ", ")) may POST/DELETE, but with admin.mode \(octal(mode)) and admin.group not one of them their members cannot open the socket"
        case .adminOpenToEveryone(let mode):
            "admin.mode \(octal(mode)) lets any local user open the socket and neither admin.allowedUids nor admin.allowedGroups is set: anyone may POST/DELETE"
        case .clockImplausible(let now):
            "the clock says \(now.iso8601UTC), before 2024: no RTC and no NTP sync yet?"
        case .clockUnsynchronised(let now):
            "the wall clock is not synchronised (adjtimex reports STA_UNSYNC): it says \(now.iso8601UTC), which after a power cut of a Pi without a real-time clock can be hours or days off"
        }
    }

    /// What to do about it, in one line.
    public var fix: String {
        switch self {
        case .configUnreadable(let path, _):
            "pass --config with the path of a readable configuration file (tried \(path))"
        case .configNotJSON(let path, _):
            "correct the JSON syntax of \(path) (`python3 -m json.tool \(path)` shows where it breaks)"
        case .configInvalid(let path, let problems):
            "edit \(path)\(keyList(problems)) as described (`gyrogate check-config \(path)` lists each problem)"
        case .bluetoothUnsupported:
            "load the Bluetooth module (`modprobe bluetooth`) or, on a machine without Bluetooth (VM, container), set bluetooth.transport to tcp:HOST:PORT or serial:/dev/DEVICE:BAUD with an H4 controller"
        case .adapterMissing(_, let present):
            present.isEmpty
                ? "plug in a Bluetooth adapter (check `ls /sys/class/bluetooth`) or set bluetooth.transport to tcp:/serial:"
                : "set bluetooth.transport to one of \(present.map { "hci:\($0.dropFirst(3))" }.joined(separator: ", "))"
        case .adapterBusy(let adapter, let bluetoothdRunning):
            bluetoothdRunning
                ? "stop and disable bluetoothd (`systemctl disable --now bluetooth`); the gateway then brings hci\(adapter) down itself"
                : "run with CAP_NET_ADMIN (the systemd unit grants it), or bring the adapter down: `btmgmt --index \(adapter) power off`"
        case .adapterTaken:
            "stop the program holding it (a running gyrogate: `systemctl stop gyrogate`) or use another adapter"
        case .adapterPermissionDenied:
            "run as root or grant the capabilities: `setcap cap_net_admin,cap_net_raw+ep $(command -v gyrogate)`"
        case .transportUnreachable(let transport, _):
            "start the controller or emulator that should listen on \(transport.dropFirst(4)), or correct bluetooth.transport"
        case .serialUnavailable(_, let device, _):
            "check that \(device) exists (`ls -l \(device)`), that this user may open it (group dialout) and that no other program uses it"
        case .transportFailed:
            "check bluetooth.transport and the controller"
        case .capabilitiesMissing:
            "run as root, or `setcap cap_net_admin,cap_net_raw+ep $(command -v gyrogate)`, or AmbientCapabilities=CAP_NET_ADMIN CAP_NET_RAW in the systemd unit"
        case .capabilitiesUnknown:
            "make sure /proc is mounted; the HCI user channel needs CAP_NET_ADMIN and CAP_NET_RAW"
        case .brokerUnreachable(let broker, _):
            "start the broker on \(broker) or correct mqtt.host / mqtt.port (a firewall may also block it)"
        case .brokerTLS:
            "check mqtt.tls.caFile (it must sign the broker's certificate, whose name must match mqtt.host) and the client certFile/keyFile"
        case .brokerCredentialsRejected:
            "correct mqtt.username and the password (mqtt.passwordFile or GYROGATE_MQTT_PASSWORD), or add the user on the broker (`mosquitto_passwd`)"
        case .brokerRefused:
            "check the broker's log for why it refused this client (client id, protocol, quotas)"
        case .publishNotAuthorized(let topic, let prefix, let username):
            "grant \(username.map { "user \($0)" } ?? "anonymous clients") write access in the broker's ACL (mosquitto: `topic write \(aclPattern(prefix, topic))`) or correct mqtt.topicPrefix"
        case .publishRefused:
            "check the broker's log and its limits (quota, payload size) for this topic"
        case .publishUnacknowledged:
            "check the broker's log; the connection dropped or the broker did not answer in time"
        case .aclUnverifiable(let topic, let prefix):
            "check the broker's ACL by hand: the gateway must be allowed to write \(aclPattern(prefix, topic)) (or use a broker with MQTT v5)"
        case .dataDirectoryNotADirectory(let path), .dataDirectoryCannotBeCreated(let path, _), .dataDirectoryNotWritable(let path, _):
            "set dataDirectory to a writable folder, or create \(path) for the gateway's user (`install -d -o USER \(path)`)"
        case .lowDiskSpace(_, let free, let store, _):
            "free disk space or lower retention.maxStoreBytes to at most \(max(1 << 20, free + store - free / 10)) bytes"
        case .sdCardWear:
            "put dataDirectory on a USB disk or SSD, or lower gyro.odrHz or the number of sensors (docs/durability.md, \"Writes\")"
        case .diskSpaceUnknown:
            "check the filesystem with `df -h`"
        case .adminDirectoryNotADirectory(let path), .adminDirectoryCannotBeCreated(let path, _), .adminDirectoryNotWritable(let path, _):
            "set admin.socketPath in a writable folder, or create \(path) for the gateway's user (systemd: RuntimeDirectory=gyrogate)"
        case .adminSocketNotASocket(let path):
            "remove \(path) or set admin.socketPath to another path"
        case .adminGroupUnknown(let key, let group):
            "create the group (`groupadd \(group)`) or correct \(key)"
        case .adminGroupNotOwned(let group):
            "run the gateway as a member of \(group) (`usermod -aG \(group) USER`) or remove admin.group"
        case .adminOwnerCannotConnect:
            "set admin.mode to \"0660\" (or \"0600\")"
        case .adminGroupWithoutAccess:
            "set admin.mode to \"0660\""
        case .adminAllowedGroupsLockedOut(let groups, _):
            "set admin.group to \(groups.first ?? "one of them") and admin.mode to \"0660\""
        case .adminOpenToEveryone:
            "set admin.mode to \"0660\" with admin.group, or list who may change things in admin.allowedUids / admin.allowedGroups"
        case .clockImplausible:
            "give the gateway a time source (`timedatectl set-ntp true` for systemd-timesyncd, or chrony) or an RTC; it may run meanwhile: what it records is re-dated when the clock is synchronised"
        case .clockUnsynchronised:
            "give the gateway a time source (`timedatectl set-ntp true` for systemd-timesyncd, or chrony); until then it dates samples by the clock of a board whose power cycle it learned while synchronised, and re-dates everything when the clock is synchronised"
        }
    }

    public var description: String { "\(problem) — fix: \(fix)" }
}

/// The ACL pattern that covers everything the gateway publishes: `site/` → `site/#`, none → `#`.
private func aclPattern(_ prefix: String, _ topic: String) -> String {
    if prefix.isEmpty { return "#" }
    return prefix.hasSuffix("/") ? prefix + "#" : topic
}

func octal(_ mode: Int) -> String { "0" + String(mode, radix: 8) }

/// `: gyro.odrHz, mqtt.host` for the keys the problems name, or nothing.
private func keyList(_ problems: [ConfigProblem]) -> String {
    let keys = problems.map(\.path).filter { !$0.isEmpty }
    return keys.isEmpty ? "" : ": " + keys.joined(separator: ", ")
}
