/// A Firestore-style document path, `collection/doc[/collection/doc…]`, which is also the
/// MQTT topic under the configured prefix. Segments may not be empty nor contain MQTT wildcards,
/// and the path may not start with `$`, so a path can never address more than one topic.
public struct DocumentPath: Hashable, Sendable, CustomStringConvertible, Comparable {
    public let rawValue: String

    public init(_ rawValue: String) throws(StoreError) {
        let segments = rawValue.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count >= 2, segments.count % 2 == 0 else {
            throw .invalidPath(rawValue, reason: "expected an even number of segments (collection/document)")
        }
        if let problem = Self.segmentProblem(segments) { throw .invalidPath(rawValue, reason: problem) }
        self.rawValue = rawValue
    }

    /// `records/abc` → `records`; `TitanUpUsers/u/DailySessions/s` → `TitanUpUsers/u/DailySessions`.
    public var collection: String { String(rawValue[..<rawValue.lastIndex(of: "/")!]) }
    public var documentId: String { String(rawValue[rawValue.index(after: rawValue.lastIndex(of: "/")!)...]) }
    public var description: String { rawValue }
    public static func < (a: DocumentPath, b: DocumentPath) -> Bool { a.rawValue < b.rawValue }

    /// The collection of chunk documents.
    public static let chunkCollection = "realtime_data"

    /// `realtime_data/{chunkId}`.
    public static func chunk(_ chunkId: String) throws(StoreError) -> DocumentPath { try DocumentPath("\(chunkCollection)/\(chunkId)") }

    /// A collection path has an odd number of segments; used by document listings.
    public static func isCollectionPath(_ text: String) -> Bool {
        let segments = text.split(separator: "/", omittingEmptySubsequences: false)
        return segments.count % 2 == 1 && segmentProblem(segments) == nil
    }

    static func segmentProblem(_ segments: [Substring]) -> String? {
        for segment in segments {
            if segment.isEmpty { return "empty segment" }
            if segment == "." || segment == ".." { return "\"\(segment)\" segments are not allowed" }
            if segment.contains(where: { $0 == "+" || $0 == "#" || $0 == "\0" }) { return "segment \"\(segment)\" contains an MQTT wildcard or NUL" }
        }
        if segments.first?.hasPrefix("$") == true { return "must not start with \"$\"" }
        return nil
    }
}
