/// Board model, as `mbl_mw_metawearboard_get_model` derives it (protocol reference, 2.2).
///
/// Informational only: sensor code must pick register maps from ``IMUChip``, not from the model.
public enum MetaWearModel: String, Hashable, Sendable, CaseIterable {
    case unknown
    case metaWearR
    case metaWearRG
    case metaWearRPro
    case metaWearC
    case metaWearCPro
    case metaEnvironment
    case metaHealth
    case metaTracker
    case metaMotionR
    case metaMotionRL
    case metaMotionC
    case metaMotionS

    /// Detects the model from the Device Information model-number string (0x2A24) and the set of
    /// modules that answered discovery as present.
    public static func detect(modelNumber: String?, presentModules: Set<MetaWearModuleID>) -> MetaWearModel {
        switch modelNumber {
        case "0":
            return .metaWearR
        case "1":
            return presentModules.contains(.barometer) && presentModules.contains(.ambientLight)
                ? .metaWearRPro : .metaWearRG
        case "2":
            if presentModules.contains(.magnetometer) { return .metaWearCPro }
            if presentModules.contains(.humidity) { return .metaEnvironment }
            return .metaWearC
        case "3":
            return .metaHealth
        case "4":
            return .metaTracker
        case "5":
            return presentModules.contains(.ambientLight) ? .metaMotionR : .metaMotionRL
        case "6":
            return .metaMotionC
        case "8":
            return .metaMotionS
        default:
            return .unknown
        }
    }
}
