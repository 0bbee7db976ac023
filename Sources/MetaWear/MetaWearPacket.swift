/// One notification from `326a9006`, routed by `(module, register)` (protocol reference, section 1).
///
/// Produced by ``MetaWearPacketParser``. Headers this code does not decode become ``unknown(module:register:bytes:)``
/// (the SDK ignores them); headers it does decode but with a wrong length throw
/// ``MetaWearPacketError`` instead.
public enum MetaWearPacket: Hashable, Sendable {
    /// `[id 80 …]`: module info; `nil` when the module is absent.
    case moduleInfo(MetaWearModuleID, ModuleInfo?)
    /// Gyro rotation, 1 raw sample (`13 05` on BMI160, `13 04` on BMI270).
    case gyroData(RawTriples)
    /// Gyro packed, 3 raw samples oldest first (`13 07` on BMI160, `13 05` on BMI270).
    case gyroPacked(RawTriples)
    /// Acceleration, 1 raw sample (`03 04`).
    case accData(RawTriples)
    /// Acceleration packed, 3 raw samples (`03 1c` on BMI160, `03 05` on BMI270).
    case accPacked(RawTriples)
    /// `13 83 conf range`.
    case gyroConfig(Gyro.Configuration)
    /// `03 83 conf range` (decoding needs the accelerometer chip).
    case accConfig(Accelerometer.Configuration)
    /// `11 8c pct mv mv`.
    case battery(Settings.BatteryState)
    /// `11 8b type a0 … a5`.
    case macAddress(MACAddress)
    /// `01 01 state`.
    case switchState(Switch.State)
    /// `0b 84 tick×4 reset_uid`.
    case logTime(Logging.Time)
    /// `0b 85 n×4`: stored log entries.
    case logLength(UInt32)
    /// `0b 02 id`: a logger trigger was created.
    case loggerCreated(id: UInt8)
    /// `09 02 id`: a processor was created.
    case processorCreated(id: UInt8)
    /// `0a 02 id`: an event command was recorded.
    case eventCreated(id: UInt8)
    /// Any other header, with the whole notification.
    case unknown(module: MetaWearModuleID, register: UInt8, bytes: [UInt8])
}
