import Foundation

/// The frames of a WAL file's current generation, as (page, commit) pairs: SQLite's WAL format
/// (a 32-byte header, then 24-byte frame headers, each with the page number and, on a
/// commit's last frame, the database size; frames of the current generation carry the
/// header's salts).
public func walFrames(_ path: String) throws -> [(page: UInt32, commit: Bool)] {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    func be32(_ at: Int) -> UInt32 { data[at..<(at + 4)].reduce(0) { $0 << 8 | UInt32($1) } }
    guard data.count >= 32 else { return [] }
    let pageSize = Int(be32(8))
    let salts = data[16..<24]
    var frames: [(UInt32, Bool)] = []
    var at = 32
    while at + 24 + pageSize <= data.count, data[(at + 8)..<(at + 16)] == salts {
        frames.append((be32(at), be32(at + 4) != 0))
        at += 24 + pageSize
    }
    return frames
}
