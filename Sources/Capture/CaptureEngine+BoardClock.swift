import GyroStore

extension CaptureEngine {
    /// Host time (epoch s) at which each power cycle (`reset_uid`) of `device` began, as last
    /// saved: what places log entries of a power cycle this process never saw.
    public nonisolated func boardResetTimes(device: String) async throws -> [UInt8: Double] {
        try await store.boardResetTimes(device: device)
    }

    /// Saves when a power cycle of `device` began, for later runs of the gateway.
    public nonisolated func saveBoardResetTime(device: String, resetUID: UInt8, resetTime: Double) async throws {
        try await store.saveBoardResetTime(device: device, resetUID: resetUID, resetTime: resetTime)
    }
}
