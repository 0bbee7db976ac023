/// Everything learnt about a board during initialisation: Device Information strings and the
/// module-discovery answers (protocol reference, section 2).
public struct BoardInfo: Hashable, Sendable {
    public var firmwareRevision: String?
    public var modelNumber: String?
    public var hardwareRevision: String?
    public var manufacturer: String?
    public var serialNumber: String?

    /// Modules that answered discovery as present, by id.
    public var modules: [MetaWearModuleID: ModuleInfo] = [:]
    /// Modules that answered discovery as absent (`[id, 0x80]`).
    public var absentModules: Set<MetaWearModuleID> = []

    public init(
        firmwareRevision: String? = nil, modelNumber: String? = nil, hardwareRevision: String? = nil,
        manufacturer: String? = nil, serialNumber: String? = nil
    ) {
        self.firmwareRevision = firmwareRevision
        self.modelNumber = modelNumber
        self.hardwareRevision = hardwareRevision
        self.manufacturer = manufacturer
        self.serialNumber = serialNumber
    }

    /// Records one discovery answer; `nil` means absent.
    public mutating func record(_ id: MetaWearModuleID, _ info: ModuleInfo?) {
        if let info {
            modules[id] = info
            absentModules.remove(id)
        } else {
            modules[id] = nil
            absentModules.insert(id)
        }
    }

    /// Whether discovery answered for `id` (present or absent).
    public func isKnown(_ id: MetaWearModuleID) -> Bool { modules[id] != nil || absentModules.contains(id) }

    public func isPresent(_ id: MetaWearModuleID) -> Bool { modules[id] != nil }

    public subscript(id: MetaWearModuleID) -> ModuleInfo? { modules[id] }

    public var presentModules: Set<MetaWearModuleID> { Set(modules.keys) }

    /// Model from the model-number string plus module presence.
    public var model: MetaWearModel { MetaWearModel.detect(modelNumber: modelNumber, presentModules: presentModules) }

    /// Gyro chip from the gyro implementation byte; `nil` if absent or unknown.
    public var gyroChip: IMUChip? { modules[.gyro].flatMap { IMUChip(gyroImplementation: $0.implementation) } }

    /// Accelerometer chip from its implementation byte; `nil` if absent or unknown.
    public var accelerometerChip: IMUChip? {
        modules[.accelerometer].flatMap { IMUChip(accelerometerImplementation: $0.implementation) }
    }

    /// Gyro register table for this board, or `nil` without a known gyro.
    public var gyroRegisters: Gyro.RegisterMap? {
        guard let info = modules[.gyro], let chip = gyroChip else { return nil }
        return Gyro.RegisterMap(chip: chip, revision: info.revision)
    }

    /// Accelerometer register table for this board, or `nil` without a known accelerometer.
    public var accelerometerRegisters: Accelerometer.RegisterMap? {
        guard let info = modules[.accelerometer], let chip = accelerometerChip else { return nil }
        return Accelerometer.RegisterMap(chip: chip, revision: info.revision)
    }

    /// LED module revision (delay honoured from 1), or `nil` if absent.
    public var ledRevision: UInt8? { modules[.led]?.revision }

    /// Number of logger slots (logging extra[0]), or `nil` if unknown.
    public var loggerSlotCount: Int? { modules[.logging]?.extra.first.map(Int.init) }
}
