/// HCI_LE_Create_Connection_Cancel, Core v5.4, Vol 4, Part E, 7.8.13.
///
/// bumble's emulator answers success but completes the connection anyway
/// (`docs/bumble-test-peer.md`, 6): a host must handle a Connection Complete after cancelling.
public struct LECreateConnectionCancelCommand: HCIParameterlessCommand {
    public static let opcode = HCIOpcode.leCreateConnectionCancel
    public init() {}
}
