import BLEHost
import FoundationEssentials
import GatewayConfig
import Glibc
import Logging

/// The Bluetooth transport opens: the same `TransportFactory.open` as the gateway, closed again
/// at once (no HCI command is sent). An adapter that is up is left up: the check says whether
/// the gateway will bring it down itself (CAP_NET_ADMIN, no bluetoothd to power it up again).
enum TransportCheck {
    static func run(_ transport: TransportSpec, canTakeAdapter: Bool, logger: Logger) async -> CheckResult {
        let spec = transport.description
        do {
            let opened = try await TransportFactory.open(spec, takeAdapter: false, logger: logger)
            opened.close()
            switch transport {
            case .userChannel(let adapter): return .ok("transport", "\(spec): hci\(adapter)'s user channel opened and closed (adapter present, down, not held by bluetoothd)")
            case .tcp: return .ok("transport", "\(spec): connected and closed")
            case .serial(let device, let baud): return .ok("transport", "\(spec): \(device) opened at \(baud) baud and closed")
            }
        } catch let error as TransportError {
            if case .userChannel(let adapter) = transport, error.errorNumber == EBUSY, canTakeAdapter,
               TransportFactory.adapterIsUp(UInt16(adapter)) == true, !isRunning("bluetoothd") {
                return .ok("transport", "\(spec): hci\(adapter) is up; the gateway brings it down when it starts (HCIDEVDOWN, as `btmgmt power off`)")
            }
            return .problem("transport", problem(for: error, transport: transport))
        } catch {
            return .problem("transport", .transportFailed(transport: spec, reason: "\(error)"))
        }
    }

    static func problem(for error: TransportError, transport: TransportSpec) -> DoctorProblem {
        let spec = transport.description
        let reason = reasonText(error)
        switch transport {
        case .userChannel(let adapter):
            switch error.errorNumber {
            case EAFNOSUPPORT?: return .bluetoothUnsupported(adapter: adapter)
            case ENODEV?: return .adapterMissing(adapter: adapter, present: presentAdapters())
            case EBUSY?: return .adapterBusy(adapter: adapter, bluetoothdRunning: isRunning("bluetoothd"))
            case EUSERS?, EALREADY?: return .adapterTaken(adapter: adapter)
            case EPERM?, EACCES?: return .adapterPermissionDenied(adapter: adapter)
            default: return .transportFailed(transport: spec, reason: error.description)
            }
        case .tcp:
            return .transportUnreachable(transport: spec, reason: reason)
        case .serial(let device, _):
            return .serialUnavailable(transport: spec, device: device, reason: reason)
        }
    }

    /// `connect failed: Connection refused (errno 111)`, or the hint when there is no errno.
    private static func reasonText(_ error: TransportError) -> String {
        var text = "\(error.operation) failed"
        if let number = error.errorNumber, let errorText = error.errorText { text += ": \(errorText) (errno \(number))" }
        else if let hint = error.hint { text += ": \(hint)" }
        return text
    }

    /// `hci0`, `hci1`, … as the kernel lists them.
    static func presentAdapters(sysfs: String = "/sys/class/bluetooth") -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: sysfs)) ?? []
        return names.filter { $0.hasPrefix("hci") && !$0.contains(":") }.sorted()
    }

    /// A process of that name (`/proc/PID/comm`) is running.
    static func isRunning(_ name: String) -> Bool {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.contains { entry in
            guard entry.allSatisfy(\.isNumber),
                  let comm = try? String(contentsOfFile: "/proc/\(entry)/comm", encoding: .utf8) else { return false }
            return comm.trimmed() == name
        }
    }
}
