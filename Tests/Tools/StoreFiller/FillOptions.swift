// The `fill` mode's options.
//
//   store-filler fill DIR --bytes SIZE [--sensors 4] [--users 2] [--hz 100] [--chunk-size 2000]
//       [--session-hours 4] [--second-session 0.5] [--gaps 3] [--unpublished-chunks 100]
//       [--device-prefix C4:BE:84:00:10] [--seed 1] [--zone UTC]
//       [--open-session DEVICE --chunks N [--user U]]
//
// SIZE is bytes or a number with K, M or G (binary: 2G = 2 GiB), compared with the store's
// live pages (GyroStore.usedBytes, what retention compares with retention.maxStoreBytes).
// `--bytes 0` with `--open-session` writes only the open session.
import FoundationEssentials

struct Usage: Error {
    let text: String
    static func bad(_ text: String) -> Usage { Usage(text: text) }
}

struct FillOptions {
    var directory: String
    var targetBytes: Int = 0
    var sensors = 4
    var users = 2
    var hz: Double = 100
    var chunkSize = 2000
    var sessionHours: Double = 4
    /// The chance that a board has a second session on a day.
    var secondSession: Double = 0.5
    /// At most this many gaps a session (at least one).
    var gaps = 3
    /// The newest chunks whose outbox rows stay (unpublished), with their sessions' documents.
    var unpublishedChunks = 100
    var devicePrefix = "C4:BE:84:00:10"
    var seed: UInt64 = 1
    var zone = "UTC"
    /// One open session of this device, left for a gateway to continue.
    var openSession: String?
    var openChunks = 0
    var openUser = "bench-user"

    static let usage = """
        store-filler fill DIR --bytes SIZE [--sensors N] [--users N] [--hz HZ] [--chunk-size N] [--session-hours H] \
        [--second-session P] [--gaps N] [--unpublished-chunks N] [--device-prefix XX:XX:XX:XX:XX] [--seed N] [--zone NAME] \
        [--open-session DEVICE --chunks N [--user U]]
        """

    init(_ arguments: [String]) throws {
        guard let directory = arguments.first, !directory.hasPrefix("--") else { throw Usage.bad(Self.usage) }
        self.directory = directory
        var rest = arguments.dropFirst()
        var sawBytes = false
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { throw Usage.bad("\(flag) needs a value\n" + Self.usage) }
            func number<T: LosslessStringConvertible>(_: T.Type) throws -> T {
                guard let parsed = T(value) else { throw Usage.bad("\(flag): not a number: \(value)") }
                return parsed
            }
            switch flag {
            case "--bytes": targetBytes = try Self.size(value); sawBytes = true
            case "--sensors": sensors = try number(Int.self)
            case "--users": users = try number(Int.self)
            case "--hz": hz = try number(Double.self)
            case "--chunk-size": chunkSize = try number(Int.self)
            case "--session-hours": sessionHours = try number(Double.self)
            case "--second-session": secondSession = try number(Double.self)
            case "--gaps": gaps = try number(Int.self)
            case "--unpublished-chunks": unpublishedChunks = try number(Int.self)
            case "--device-prefix": devicePrefix = value
            case "--seed": seed = try number(UInt64.self)
            case "--zone": zone = value
            case "--open-session": openSession = value.uppercased()
            case "--chunks": openChunks = try number(Int.self)
            case "--user": openUser = value
            default: throw Usage.bad("unknown option \(flag)\n" + Self.usage)
            }
        }
        guard sawBytes || openSession != nil else { throw Usage.bad("--bytes or --open-session is needed\n" + Self.usage) }
        guard (1...64).contains(sensors), users >= 1, hz > 0, (10...10_000).contains(chunkSize), sessionHours > 0.1, gaps >= 1,
              unpublishedChunks >= 0, (0...1).contains(secondSession) else {
            throw Usage.bad("an option is out of range\n" + Self.usage)
        }
        if openSession != nil, openChunks < 1 { throw Usage.bad("--open-session needs --chunks N (N >= 1)") }
    }

    /// `2G`, `512M`, `0.1G`, `100000`: binary multiples.
    static func size(_ text: String) throws -> Int {
        let units: [Character: Double] = ["K": 1024, "M": 1_048_576, "G": 1_073_741_824]
        var digits = text.uppercased()
        var unit = 1.0
        if digits.hasSuffix("IB") { digits.removeLast(2) }
        if let last = digits.last, let factor = units[last] {
            unit = factor
            digits.removeLast()
        }
        guard let value = Double(digits), value >= 0 else { throw Usage.bad("--bytes: not a size: \(text)") }
        return Int(value * unit)
    }

    /// Board `i`'s address: the prefix and one more byte.
    func device(_ board: Int) -> String {
        let hex = String(board + 1, radix: 16, uppercase: true)
        return "\(devicePrefix):\(hex.count < 2 ? "0" + hex : hex)"
    }

    func user(_ board: Int) -> String { "filler-user-\(board % users + 1)" }
}

/// `value` with `places` decimals (FoundationEssentials has no `String(format:)`).
func fixed(_ value: Double, _ places: Int) -> String {
    var scale = 1.0
    for _ in 0..<places { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    let whole = Int64(scaled / scale), fraction = Int64(scaled - Double(whole) * scale)
    let digits = String(fraction)
    return (value < 0 ? "-" : "") + "\(whole)" + (places > 0 ? "." + String(repeating: "0", count: places - digits.count) + digits : "")
}
