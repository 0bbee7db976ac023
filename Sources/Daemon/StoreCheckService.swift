import GyroStore
import Logging
import ServiceLifecycle

/// Runs the store's full integrity check in the background once the gateway serves (at the
/// first start of a boot, then once a day: `IntegritySchedule` says why not at every start), and stops
/// the gateway when SQLite finds the store damaged (that check, or any read or write): a
/// damaged file takes no more writes, and the next start moves it aside and begins a new store
/// (`GyroStore.open`). Under systemd, `Restart=always` makes that start.
struct StoreCheckService: Service {
    let store: GyroStore
    let logger: Logger

    func run() async throws {
        // Its own thread, at the idle I/O class; not awaited: a shutdown does not wait for a
        // check that is reading, only stops the schedule.
        let checks = Task { [store] in await store.verifyIntegrityWhenDue() }
        defer { checks.cancel() }
        guard let reason = await cancelWhenGracefulShutdown({ await store.untilDamaged() }) else { return }
        let error = StoreError.damaged(reason: reason)
        logger.critical("stopping: the store is damaged", metadata: ["subsystem": "store", "error": "\(error)"])
        throw error
    }
}
