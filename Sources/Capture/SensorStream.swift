import GyroStore
import MetaWear

/// A sensor data stream of a board.
public enum SensorStream: String, Sendable, CaseIterable {
    case gyro
    case accelerometer

    /// Point member names in chunk documents: degrees per second or g.
    var axisKeys: [String] {
        switch self {
        case .gyro: ["gx", "gy", "gz"]
        case .accelerometer: ["ax", "ay", "az"]
        }
    }

    /// Units per count of the board's range `range` (°/s or g), as the sensors layer scales
    /// counts: the store keeps a chunk's axes as counts with it (GyroStore's `ChunkBody`). `nil` for a
    /// range no board has.
    func unitsPerLSB(range: Double) -> Double? {
        switch self {
        case .gyro: Gyro.Range.allCases.first { $0.degreesPerSecond == range }.map { SampleDecoder(gyroRange: $0).unitsPerLSB }
        case .accelerometer:
            Accelerometer.Range.allCases.first { $0.gravities == range }.map { SampleDecoder(accelerometerRange: $0).unitsPerLSB }
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
    public static func chunk(_ chunkId: String) throws(StoreError) -> DocumentPath { try DocumentPath.chunk(chunkId) }
    public static func dailySession(userId: String, sessionId: String) throws(StoreError) -> DocumentPath {
        try DocumentPath("TitanUpUsers/\(userId)/DailySessions/\(sessionId)")
    }
    public static func medals(userId: String) throws(StoreError) -> DocumentPath {
        try DocumentPath("TitanUpUsers/\(userId)/MedalsAndTrophies/current")
    }
}
