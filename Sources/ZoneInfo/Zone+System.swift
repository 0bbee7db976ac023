#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension Zone {
    /// The name of the machine's zone, found as the C library and Foundation find it: the `TZ`
    /// variable when it names a zone (`Europe/Berlin`, `:Europe/Berlin` or a path in the zoneinfo
    /// folder), else the target of the `/etc/localtime` link below a `zoneinfo/` folder.
    /// `nil` when neither names a loadable zone (no link, a copied file, or a bare POSIX rule in
    /// `TZ`): the machine's zone then has no IANA name to give.
    public static func systemIdentifier(environment: [String: String]? = nil, localtime: String = "/etc/localtime",
                                        directory: String = defaultDirectory) -> String? {
        let variable = environment.map { $0["TZ"] } ?? getenv("TZ").map { String(cString: $0) }
        if var name = variable, !name.isEmpty {
            if name.hasPrefix(":") { name.removeFirst() }
            if name.hasPrefix(directory + "/") { name.removeFirst(directory.count + 1) }
            if (try? Zone.named(name, directory: directory)) != nil { return name }
        }
        guard let target = linkTarget(localtime), let name = suffix(of: target, after: "zoneinfo/") else { return nil }
        return (try? Zone.named(name, directory: directory)) != nil ? name : nil
    }

    /// What follows the last `marker` in `text`.
    static func suffix(of text: String, after marker: String) -> String? {
        let bytes = Array(text.utf8), pattern = Array(marker.utf8)
        guard bytes.count >= pattern.count else { return nil }
        for start in stride(from: bytes.count - pattern.count, through: 0, by: -1) where bytes[start..<start + pattern.count].elementsEqual(pattern) {
            return String(decoding: bytes[(start + pattern.count)...], as: UTF8.self)
        }
        return nil
    }

    static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink(path, &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
