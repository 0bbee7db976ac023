import Foundation
import Logging

/// A folder under the system temp directory, removed when the test is done with it.
public final class TemporaryDirectory: @unchecked Sendable {
    public let path: String

    public init(_ label: String = "gyrogate") throws {
        path = NSTemporaryDirectory() + "\(label)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    public func file(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }

    /// Removes the folder now: top-level code in a benchmark's `main.swift` never deinitialises
    /// its globals, and a left-over 2.8 GB store per run filled the disk.
    public func remove() { try? FileManager.default.removeItem(atPath: path) }

    deinit { remove() }
}

/// A logger that stays quiet unless `GYROGATE_TEST_LOG` is set.
public func testLogger(_ label: String = "gyrogate.test") -> Logger {
    guard let level = ProcessInfo.processInfo.environment["GYROGATE_TEST_LOG"].flatMap(Logger.Level.init(rawValue:)) else {
        return Logger(label: label, factory: { _ in SwiftLogNoOpLogHandler() })
    }
    var logger = Logger(label: label)
    logger.logLevel = level
    return logger
}

/// The folder of the package's built products (next to the running test bundle).
public func builtProductsDirectory() -> URL {
    let candidates = [Bundle.main.bundleURL, URL(fileURLWithPath: CommandLine.arguments[0])]
    for candidate in candidates {
        var url = candidate
        while url.path != "/" {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("store-feeder").path) { return url }
            url.deleteLastPathComponent()
        }
    }
    return Bundle.main.bundleURL
}

/// Parses a JSON document body into a dictionary.
public func jsonObject(_ bytes: [UInt8]?) throws -> [String: Any] {
    guard let bytes else { throw TestSupportError.missingDocument }
    guard let object = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else { throw TestSupportError.notAnObject }
    return object
}

public enum TestSupportError: Error {
    case missingDocument
    case notAnObject
}
