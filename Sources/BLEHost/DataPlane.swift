import PosixThreads

extension ThreadExecutor {
    /// The process's data plane: the thread that reads the HCI transports and runs every actor on
    /// a notification's way (the BLE host, the MetaWear boards and their supervisors). The gateway
    /// has one controller at a time; tests share it too.
    public static let dataPlane: ThreadExecutor = {
        do {
            return try ThreadExecutor(name: "ble-data-plane")
        } catch {
            preconditionFailure("the data plane cannot start: \(error)")
        }
    }()
}
