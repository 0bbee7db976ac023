// swift-tools-version:6.1
import PackageDescription

// One module per layer (see README "Layout"). Dependencies point one way:
// gyrogate (CLI) -> Daemon -> Capture -> GyroStore; GatewayConfig is plain values.
let strict: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

let package = Package(
    name: "gyrogate",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "gyrogate", targets: ["gyrogate"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        .target(name: "GatewayConfig", swiftSettings: strict),
        // MetaWear protocol as values: commands, packets, module discovery, sample clock.
        .target(name: "MetaWear", swiftSettings: strict),
        .target(
            name: "GyroStore",
            dependencies: [.product(name: "GRDB", package: "GRDB.swift"), .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        .target(
            name: "Capture",
            dependencies: ["GyroStore", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        // libmosquitto (apt: libmosquitto-dev), the MQTT client library.
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        .target(
            name: "MQTTPublisher",
            dependencies: [
                "CMosquitto", "GyroStore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "Daemon",
            dependencies: [
                "GatewayConfig", "GyroStore", "Capture", "MQTTPublisher",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "gyrogate",
            dependencies: [
                "GatewayConfig", "GyroStore", "Capture", "Daemon",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // A child process for the crash tests: feeds samples and reports what was acknowledged.
        .executableTarget(name: "store-feeder", dependencies: ["Capture", "GyroStore"], path: "Tests/Tools/StoreFeeder"),
        // `swift run -c release store-bench`
        .executableTarget(
            name: "store-bench",
            dependencies: ["Capture", "GyroStore", .product(name: "Logging", package: "swift-log"), .product(name: "GRDBSQLite", package: "GRDB.swift")],
            path: "Tests/Benchmarks/StoreBench"
        ),
        // `swift run -c release metawear-bench`
        .executableTarget(name: "metawear-bench", dependencies: ["MetaWear"], path: "Tests/Benchmarks/MetaWearBench"),
        // A child process for the MQTT crash test: captures sessions and publishes them.
        .executableTarget(name: "mqtt-feeder", dependencies: ["Capture", "GyroStore", "MQTTPublisher"], path: "Tests/Tools/MQTTFeeder"),
        // `swift run -c release mqtt-bench [DOCUMENTS]`
        .executableTarget(
            name: "mqtt-bench",
            dependencies: ["Capture", "GyroStore", "MQTTPublisher", "CMosquitto", "TestSupport", .product(name: "Logging", package: "swift-log")],
            path: "Tests/Benchmarks/MQTTBench"
        ),
        .target(name: "TestSupport", dependencies: ["CMosquitto", .product(name: "Logging", package: "swift-log")], path: "Tests/Support"),
        .testTarget(name: "MetaWearTests", dependencies: ["MetaWear"]),
        .testTarget(name: "GatewayConfigTests", dependencies: ["GatewayConfig"]),
        .testTarget(name: "GyroStoreTests", dependencies: ["GyroStore", "TestSupport", .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(
            name: "MQTTPublisherTests",
            dependencies: ["MQTTPublisher", "Capture", "GyroStore", "TestSupport", "CMosquitto", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(name: "CaptureTests", dependencies: ["Capture", "GyroStore", "TestSupport", .product(name: "GRDB", package: "GRDB.swift")]),
    ],
    swiftLanguageModes: [.v6]
)
