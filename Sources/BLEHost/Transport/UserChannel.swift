import CHCISocket
import Glibc
import Logging

/// The Linux HCI user channel: exclusive raw access to one adapter, bypassing BlueZ.
enum UserChannel {
    static func open(adapter: UInt16, spec: String, loop: DataPlaneLoop, logger: Logger) throws(TransportError) -> any HCITransport {
        var code: Int32 = 0
        var step: UnsafePointer<CChar>?
        let descriptor = chci_open_user_channel(adapter, &code, &step)
        guard descriptor >= 0 else {
            let operation = step.map { String(cString: $0) } ?? "socket"
            throw TransportError(kind: .systemCall, transport: spec, operation: operation, errorNumber: code,
                                 hint: hint(errno: code, adapter: adapter))
        }
        logger.info("HCI user channel open", metadata: ["subsystem": "ble", "transport": "\(spec)"])
        return FileDescriptorTransport(descriptor: descriptor, name: spec, loop: loop, logger: logger)
    }

    /// What a person can do about a failed `socket` or `bind` on the user channel.
    static func hint(errno code: Int32, adapter: UInt16) -> String? {
        switch code {
        case EAFNOSUPPORT:
            return "this kernel has no Bluetooth support (AF_BLUETOOTH); load the bluetooth module or use tcp:/serial: with an H4 controller"
        case ENODEV:
            return "no Bluetooth adapter hci\(adapter); check `ls /sys/class/bluetooth`"
        case EBUSY:
            return "hci\(adapter) is up or held by bluetoothd: run `hciconfig hci\(adapter) down` / stop bluetoothd (`systemctl stop bluetooth`)"
        case EPERM, EACCES:
            return "needs CAP_NET_ADMIN and CAP_NET_RAW: run as root or `setcap cap_net_admin,cap_net_raw+ep` on the binary"
        case EALREADY:
            return "another program already holds hci\(adapter)'s user channel"
        default:
            return nil
        }
    }
}
