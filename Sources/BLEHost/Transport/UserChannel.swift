import CHCISocket
import Glibc
import Logging
import PosixThreads

/// The Linux HCI user channel: exclusive raw access to one adapter, bypassing BlueZ.
enum UserChannel {
    /// Opens adapter `adapter`'s user channel. When the adapter is up (bluetoothd powered it,
    /// or `btmgmt power on`) and `takeAdapter` allows, it is brought down first, as
    /// `btmgmt power off` would, since the user channel binds only to an adapter that is down.
    static func open(adapter: UInt16, spec: String, takeAdapter: Bool = true, loop: ThreadExecutor,
                     logger: Logger) throws(TransportError) -> any HCITransport {
        var code: Int32 = 0
        var step: UnsafePointer<CChar>?
        var descriptor = chci_open_user_channel(adapter, &code, &step)
        if descriptor < 0, code == EBUSY, takeAdapter, chci_adapter_is_up(adapter) == 1 {
            if chci_adapter_down(adapter) == 0 {
                logger.warning("hci\(adapter) was up: brought it down to take its user channel",
                              metadata: ["subsystem": "ble", "transport": "\(spec)"])
                descriptor = chci_open_user_channel(adapter, &code, &step)
            } else {
                let reason = String(cString: strerror(errno))
                logger.warning("hci\(adapter) is up and could not be brought down",
                               metadata: ["subsystem": "ble", "transport": "\(spec)", "error": "\(reason)"])
            }
        }
        guard descriptor >= 0 else {
            let operation = step.map { String(cString: $0) } ?? "socket"
            throw TransportError(kind: .systemCall, transport: spec, operation: operation, errorNumber: code,
                                 hint: hint(errno: code, adapter: adapter,
                                            adapterUp: code == EBUSY ? chci_adapter_is_up(adapter) : -1))
        }
        let buffer = chci_grow_receive_buffer(descriptor, receiveBufferBytes)
        if buffer < 0 {
            logger.warning("HCI user channel keeps the system's receive buffer; batched reads may lose notifications at high rates",
                           metadata: ["subsystem": "ble", "transport": "\(spec)", "error": "\(String(cString: strerror(errno)))"])
        }
        logger.info("HCI user channel open", metadata: ["subsystem": "ble", "transport": "\(spec)", "receiveBuffer": "\(buffer)"])
        return FileDescriptorTransport(descriptor: descriptor, name: spec, loop: loop, logger: logger)
    }

    /// The user channel's receive buffer limit.
    ///
    /// Why: the kernel queues every HCI packet to the socket as its own buffer, and controllers'
    /// drivers allocate one for the largest frame (a UART's H4 driver: over 1 KB for a 30-byte
    /// notification), so the default limit (net.core.rmem_default, 208 KB) holds about a hundred
    /// notifications, and a packet past the limit is dropped. Between paced reads
    /// (`bluetooth.readIntervalMs`) 8 sensors at 100 Hz queue 400. A limit is not an
    /// allocation: only what is queued uses memory.
    static let receiveBufferBytes: Int32 = 4 << 20

    /// What a person can do about a failed `socket` or `bind` on the user channel. `adapterUp`:
    /// `chci_adapter_is_up` after an EBUSY (1 up, 0 down, -1 unknown).
    static func hint(errno code: Int32, adapter: UInt16, adapterUp: Int32 = -1) -> String? {
        switch code {
        case EAFNOSUPPORT:
            return "this kernel has no Bluetooth support (AF_BLUETOOTH); load the bluetooth module or use tcp:/serial: with an H4 controller"
        case ENODEV:
            return "no Bluetooth adapter hci\(adapter); check `ls /sys/class/bluetooth`"
        case EBUSY where adapterUp == 0:
            // The kernel refuses the user channel while HCI_SETUP/HCI_CONFIG/HCI_INIT is set. Its
            // first power-on clears HCI_SETUP only when it succeeds: after a failed one (a command
            // that timed out, e.g. a UART line out of sync) the adapter stays busy until it is
            // registered again.
            return "hci\(adapter) is down but the kernel has not finished setting it up; this lasts seconds, "
                + "and for good when its setup failed: look for `hci\(adapter)` in `dmesg` (e.g. 'Opcode 0x0c03 failed: -110', "
                + "'Frame reassembly failed'), then attach the controller again (unplug it, or restart `btattach`)"
        case EBUSY:
            return "hci\(adapter) is up or still initialising, and could not be brought down (that needs CAP_NET_ADMIN): "
                + "power it off (`btmgmt --index \(adapter) power off`) and keep bluetoothd away from it (`systemctl disable --now bluetooth`)"
        case EPERM, EACCES:
            return "needs CAP_NET_ADMIN and CAP_NET_RAW: run as root or `setcap cap_net_admin,cap_net_raw+ep` on the binary"
        case EUSERS, EALREADY:
            return "another program already holds hci\(adapter)'s user channel (a running gyrogate?)"
        default:
            return nil
        }
    }
}
