// Fuzz target "config": GatewayConfiguration.parse on the whole input (the bytes of a config file).
//
// Property: it returns a configuration or throws ConfigError with at least one problem, each with
// a message; it never traps. A configuration it returns holds only values the loader allows
// (rates and ranges from their lists, a weekday 1...7). TransportSpec.parse also gets the input
// as text.
//
// The loader reads `mqtt.passwordFile` and looks time zones up by name, so a path into /dev,
// /proc or /sys (e.g. /dev/zero) would make a run block or read forever: such inputs are
// skipped, escaped spellings included. Relative paths resolve under a directory that does not
// exist.

import Foundation
import GatewayConfig

private let baseDirectory = "/nonexistent/gyrogate-fuzz-config"
private let deviceTrees = ["/dev", "/proc", "/sys"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = FuzzInput(data, size).bytes
    let text = String(decoding: bytes, as: UTF8.self)
    _ = try? TransportSpec.parse(text).get()
    if reachesDeviceFiles(bytes, text) { return 0 }

    let environment = bytes.count % 2 == 0 ? [:] : [GatewayConfiguration.passwordVariable: "fuzz"]
    do {
        let configuration = try GatewayConfiguration.parse(Data(bytes), source: "fuzz.json", baseDirectory: baseDirectory,
                                                           environment: environment)
        fuzzCheck(GyroSettings.rates.contains(configuration.gyro.odrHz), "gyro rate \(configuration.gyro.odrHz)")
        fuzzCheck(GyroSettings.ranges.contains(configuration.gyro.rangeDps), "gyro range \(configuration.gyro.rangeDps)")
        fuzzCheck(AccelerometerSettings.rates.contains(configuration.accelerometer.odrHz), "acc rate \(configuration.accelerometer.odrHz)")
        fuzzCheck(AccelerometerSettings.ranges.contains(configuration.accelerometer.rangeG), "acc range \(configuration.accelerometer.rangeG)")
        fuzzCheck((1...7).contains(configuration.firstWeekday), "first weekday \(configuration.firstWeekday)")
        fuzzCheck(!configuration.gatewayId.isEmpty, "empty gatewayId accepted")
        _ = String(describing: configuration)
    } catch {
        let problems = error.problems
        fuzzCheck(!problems.isEmpty, "ConfigError without problems: \(error)")
        for problem in problems { fuzzCheck(!problem.message.isEmpty, "problem without a message at \(problem.path)") }
        _ = error.description
    }
    return 0
}

/// Whether any string in the input, raw or after JSON unescaping, names a path under a device tree.
private func reachesDeviceFiles(_ bytes: [UInt8], _ text: String) -> Bool {
    if deviceTrees.contains(where: { text.contains($0) }) { return true }
    guard bytes.contains(UInt8(ascii: "\\")),
          let tree = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) else { return false }
    return containsDevicePath(tree)
}

private func containsDevicePath(_ value: Any) -> Bool {
    switch value {
    case let text as String: return deviceTrees.contains { text.contains($0) }
    case let array as [Any]: return array.contains(where: containsDevicePath)
    case let object as [String: Any]: return object.contains { containsDevicePath($0.key) || containsDevicePath($0.value) }
    default: return false
    }
}
