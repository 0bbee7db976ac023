#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where exported bytes go: files in a folder, standard output, or an HTTP response. The
/// exporter writes a file at a time (`begin`, `write`s of about 64 KiB, `end`); an output that
/// is one stream ignores the names.
public protocol ExportOutput: Sendable {
    func begin(file name: String) async throws(ExportError)
    func write(_ bytes: [UInt8]) async throws(ExportError)
    func end() async throws(ExportError)
}

/// Files in a folder, each written to `NAME.partial` and renamed when complete, so that a file
/// with the final name is always whole.
public actor DirectoryOutput: ExportOutput {
    public let directory: String
    private var file: UnsafeMutablePointer<FILE>?
    private var path = ""
    public private(set) var written: [String] = []

    public init(directory: String) { self.directory = directory }

    public func begin(file name: String) throws(ExportError) {
        try end()
        path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
        guard let opened = fopen(path + ".partial", "w") else { throw .output(path: path, reason: Self.reason()) }
        file = opened
    }

    public func write(_ bytes: [UInt8]) throws(ExportError) {
        guard let file else { return }
        let count = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        guard count == bytes.count else { throw .output(path: path, reason: Self.reason()) }
    }

    public func end() throws(ExportError) {
        guard let file else { return }
        self.file = nil
        guard fclose(file) == 0, rename(path + ".partial", path) == 0 else { throw .output(path: path, reason: Self.reason()) }
        written.append(path)
    }

    static func reason() -> String { String(cString: strerror(errno)) }
}

/// Standard output, for a pipe into `influx`, `curl` or a script.
public actor StandardOutput: ExportOutput {
    public init() {}

    public func begin(file name: String) {}

    public func write(_ bytes: [UInt8]) throws(ExportError) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { raw in Glibc.write(1, raw.baseAddress! + offset, raw.count - offset) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw .output(path: "standard output", reason: DirectoryOutput.reason()) }
            offset += count
        }
    }

    public func end() {}
}
