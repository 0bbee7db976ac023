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
        set {
            switch module {
            case .gyro: gyro = newValue
            case .accelerometer: accelerometer = newValue
            default: break
            }
        }
    }

    /// Runs `body` on the module's tracker in place; nil when it has none. (A `_modify` accessor
    /// would do the same through a coroutine, whose frame is allocated on every call.)
    mutating func update<Result>(_ module: MetaWearModuleID, _ body: (inout StreamTracker) -> Result) -> Result? {
        switch module {
        case .gyro where gyro != nil: body(&gyro!)
        case .accelerometer where accelerometer != nil: body(&accelerometer!)
        default: nil
        }
    }

    /// The modules that have a tracker, gyro first.
    var modules: [MetaWearModuleID] {
        (gyro == nil ? [] : [.gyro]) + (accelerometer == nil ? [] : [.accelerometer])
    }
}
