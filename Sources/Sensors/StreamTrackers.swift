import MetaWear

/// A board's stream trackers by module: a slot for the gyro and one for the accelerometer, so
/// that each notification reaches its tracker in place, without hashing a dictionary key.
struct StreamTrackers {
    private var gyro: StreamTracker?
    private var accelerometer: StreamTracker?

    subscript(module: MetaWearModuleID) -> StreamTracker? {
        get {
            switch module {
            case .gyro: gyro
            case .accelerometer: accelerometer
            default: nil
            }
        }
        _modify {
            switch module {
            case .gyro: yield &gyro
            case .accelerometer: yield &accelerometer
            default:
                var none: StreamTracker?
                yield &none
            }
        }
    }

    /// The modules that have a tracker, gyro first.
    var modules: [MetaWearModuleID] {
        (gyro == nil ? [] : [.gyro]) + (accelerometer == nil ? [] : [.accelerometer])
    }
}
