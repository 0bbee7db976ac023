/// The commands that clear stale board state before a gateway (re)initialises a board it may have
/// configured in an earlier session, or that another client left running.
///
/// A board keeps streaming, logging and running processors and event handlers across BLE
/// disconnects. Starting from a known-quiet board makes the later setup deterministic. The order is:
///
/// 1. **Stop the producers.** Per present IMU module: power off (`13 01 00`, `03 01 00`), disable the
///    data interrupt (`13 02 00 01`, `03 02 00 01`), then unsubscribe the data register and, when the
///    chip has one, the packed register (BMI160 `13 05 00, 13 07 00`; BMI270 `13 04 00, 13 05 00`;
///    accelerometer `03 04 00` plus `03 1c 00` or `03 05 00`). This is the SDK's stop order; with the
///    sensor off first, no notification is produced while the rest is torn down.
/// 2. **Stop logging** (`0b 01 00`), so the tear-down itself records nothing.
/// 3. **Remove event handlers** (`0a 05`) before what they might reference: an event (such as a
///    disconnect handler) can run commands while the rest is being removed.
/// 4. **Remove loggers** (`0b 0a`), then **processors** (`09 08`): loggers may record processor
///    output, so consumers go before producers. This is also the SDK tear-down set (section 9.3).
///
/// Modules that discovery found absent, or whose chip is unknown, are skipped: guessing register
/// numbers could write to a register that means something else on another chip (BMI160 gyro
/// DATA 0x05 is BMI270 gyro PACKED). Log entries are *not* erased (that is a separate decision;
/// see ``Logging/clearEntries(moduleRevision:)``), and the board is not reset.
public enum BoardResetSequence {
    /// The tear-down commands for a discovered board, in the order above.
    public static func commands(for board: BoardInfo) -> [MetaWearCommand] {
        var commands: [MetaWearCommand] = []
        if let gyro = board.gyroRegisters {
            commands += [Gyro.powerOff(gyro), Gyro.disableDataInterrupt(gyro)]
            commands.append(MetaWearCommand(module: .gyro, register: gyro.data, payload: [0x00]))
            if let packed = gyro.packedData {
                commands.append(MetaWearCommand(module: .gyro, register: packed, payload: [0x00]))
            }
        }
        if let acc = board.accelerometerRegisters {
            commands += [Accelerometer.powerOff(acc), Accelerometer.disableDataInterrupt(acc)]
            commands.append(MetaWearCommand(module: .accelerometer, register: acc.data, payload: [0x00]))
            if let packed = acc.packedData {
                commands.append(MetaWearCommand(module: .accelerometer, register: packed, payload: [0x00]))
            }
        }
        let logging = board.isPresent(.logging)
        if logging { commands.append(Logging.stop()) }
        if board.isPresent(.event) { commands.append(Event.removeAll()) }
        if logging { commands.append(Logging.removeAllLoggers()) }
        if board.isPresent(.dataProcessor) { commands.append(DataProcessor.removeAll()) }
        return commands
    }
}
