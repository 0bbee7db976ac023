import ArgumentParser
import GyroStore
#if canImport(Glibc)
import Glibc
#endif

/// `gyrogate store`: the store file itself, read-only (docs/durability.md, "Reading a store").
struct StoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store", abstract: "Read the store file itself, read-only.", subcommands: [Dump.self])

    struct Dump: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print everything the store holds as JSON Lines: sessions, chunks and their samples, documents, the outbox, integrity.",
            discussion: "Reads the file read-only, with the daemon running, stopped or killed, or a copy of store.sqlite with its -wal and -shm.")

        @Option(name: .long, help: "Folder of the store (the configuration's dataDirectory).")
        var dataDir: String?

        @Option(name: .long, help: "Configuration file naming the store.")
        var config: String?

        func run() throws {
            guard let directory = try dataDir ?? config.map(loadConfiguration)?.dataDirectory else {
                throw ValidationError("name the store with --data-dir or --config")
            }
            do {
                var pending: [UInt8] = []
                try StoreDump.write(directory: directory) { line throws(StoreDumpError) in
                    pending += line
                    if pending.count >= 1 << 16 { try writeOut(&pending) }
                }
                try writeOut(&pending)
            } catch {
                var standardError = StandardError()
                print("gyrogate \(error)", to: &standardError)
                throw ExitCode(1)
            }
        }
    }
}

/// Writes `bytes` to standard output whole, and empties it.
private func writeOut(_ bytes: inout [UInt8]) throws(StoreDumpError) {
    var offset = 0
    while offset < bytes.count {
        let count = bytes.withUnsafeBytes { raw in Glibc.write(STDOUT_FILENO, raw.baseAddress! + offset, raw.count - offset) }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { throw .output(reason: String(cString: strerror(errno))) }
        offset += count
    }
    bytes.removeAll(keepingCapacity: true)
}
