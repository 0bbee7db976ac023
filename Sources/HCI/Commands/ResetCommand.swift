/// HCI_Reset, Core v5.4, Vol 4, Part E, 7.3.2. Returns a status only.
///
/// bumble's emulated controller keeps connections, scans and pending connects across a reset
/// (`docs/bumble-test-peer.md`, 5), so a host must not assume a clean controller afterwards.
public struct ResetCommand: HCIParameterlessCommand {
    public static let opcode = HCIOpcode.reset
    public init() {}
}
