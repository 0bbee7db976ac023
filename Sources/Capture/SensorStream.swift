import GyroStore

/// A sensor data stream of a board.
public enum SensorStream: String, Sendable, CaseIterable {
    case gyro
    case accelerometer

    /// Point member names in chunk documents: degrees per second or g.
    var axisKeys: (String, String, String) {
        switch self {
        case .gyro: ("gx", "gy", "gz")
        case .accelerometer: ("ax", "ay", "az")
        }
    }

    /// The chunk document's range member: `range_dps` or `range_g`.
    var rangeKey: String { self == .gyro ? "range_dps" : "range_g" }
}

/// A sensor and the user its data belongs to.
public struct SensorIdentity: Sendable, Hashable {
    public var device: String
    public var userId: String

    public init(device: String, userId: String) {
        self.device = device
        self.userId = userId
    }
}

/// Firestore paths of the apps' documents.
public enum DocumentPaths {
    public static func record(_ sessionId: String) throws(StoreError) -> DocumentPath { try DocumentPath("records/\(sessionId)") }
    public static func chunk(_ chunkId: String) throws(StoreError) -> DocumentPath { try DocumentPath("realtime_data/\(chunkId)") }
    public static func dailySession(userId: String, sessionId: String) throws(StoreError) -> DocumentPath {
        try DocumentPath("TitanUpUsers/\(userId)/DailySessions/\(sessionId)")
    }
    public static func medals(userId: String) throws(StoreError) -> DocumentPath {
        try DocumentPath("TitanUpUsers/\(userId)/MedalsAndTrophies/current")
    }
}
