#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension Zone {
    /// Where tzdata installs the compiled zones on Debian and most other systems.
    public static let defaultDirectory = "/usr/share/zoneinfo"

    /// Names of UTC itself, which need no file (a machine without tzdata still has UTC).
    static let utcNames: Set<String> = ["UTC", "Etc/UTC", "UCT", "Etc/UCT", "GMT", "Etc/GMT", "Universal", "Etc/Universal",
                                        "Zulu", "Etc/Zulu", "Greenwich", "Etc/Greenwich", "GMT0", "Etc/GMT0", "GMT+0",
                                        "Etc/GMT+0", "GMT-0", "Etc/GMT-0"]

    /// The zone `name` (`Europe/Berlin`) from `directory`'s compiled TZif files.
    /// - throws: `ZoneInfoError` if the name is not a zone name, there is no such file, or the
    ///   file is not a valid TZif file.
    public static func named(_ name: String, directory: String = defaultDirectory) throws(ZoneInfoError) -> Zone {
        if utcNames.contains(name) { return Zone(identifier: name, fixedOffset: 0) }
        try checkName(name)
        let path = directory + "/" + name
        guard access(directory, F_OK) == 0 else {
            throw .unreadable(path: path, reason: "the folder \(directory) does not exist; install the tzdata package")
        }
        return try Zone(tzif: readZoneFile(path, name: name), identifier: name, source: path)
    }

    /// A zone name is a relative path of letters, digits and `_ + - .`; `..` would leave the folder.
    static func checkName(_ name: String) throws(ZoneInfoError) {
        guard !name.isEmpty else { throw .invalidName(name, reason: "it is empty") }
        guard !name.hasPrefix("/") else { throw .invalidName(name, reason: "it is an absolute path, not a name such as \"Europe/Berlin\"") }
        let allowed = name.utf8.allSatisfy { byte in
            (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || "/_+-.".utf8.contains(byte)
        }
        guard allowed else { throw .invalidName(name, reason: "zone names have only letters, digits and / _ + - .") }
        for component in name.split(separator: "/", omittingEmptySubsequences: false) {
            guard !component.isEmpty else { throw .invalidName(name, reason: "it has an empty path component") }
            guard component != ".." && component != "." else { throw .invalidName(name, reason: "it has a \"\(component)\" component") }
        }
    }

    /// Zone files are a few kilobytes; anything much larger is not one.
    static let maximumFileSize = 1 << 20

    static func readZoneFile(_ path: String, name: String) throws(ZoneInfoError) -> [UInt8] {
        // Non-blocking so that a FIFO where a zone should be is refused below rather than waited on.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { throw .unknownZone(name, path: path) }
            throw .unreadable(path: path, reason: String(cString: strerror(code)))
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        guard status.st_mode & S_IFMT == S_IFREG else {
            // A folder of zones ("America") is not a zone.
            if status.st_mode & S_IFMT == S_IFDIR { throw .unknownZone(name, path: path) }
            throw .unreadable(path: path, reason: "not a regular file")
        }
        guard Int(status.st_size) <= maximumFileSize else {
            throw .malformed(path: path, problem: "it is \(status.st_size) bytes, larger than any zone file")
        }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { buffer in read(descriptor, buffer.baseAddress! + filled, buffer.count - filled) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .unreadable(path: path, reason: String(cString: strerror(errno)))
            }
            if count == 0 { break }
            filled += count
        }
        return Array(bytes[..<filled])
    }
}
