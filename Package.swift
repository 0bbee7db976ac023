// swift-tools-version:6.1
import PackageDescription

// One module per layer (docs/architecture.md, "Modules"). Dependencies point one way:
// gyrogate (CLI) -> Daemon -> Capture -> GyroStore; GatewayConfig is plain values; JSON and
// TextTools are at the bottom, on FoundationEssentials alone (the binary links no full Foundation).
let strict: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]
// The actors and classes a notification passes through on the data plane (BLE host, boards,
// supervisors): their stored properties are only touched on that one thread, each access is
// short and none re-enters another, yet every mutation of one was checked for exclusivity at run
// time (swift_beginAccess with its thread-local access set), a large share of a notification's
// instructions (docs/benchmarks.md). Static checks still apply; only the dynamic ones are off,
// for these modules.
let dataPlane: [SwiftSetting] = strict + [.unsafeFlags(["-enforce-exclusivity=unchecked"])]

let package = Package(
    name: "gyrogate",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "gyrogate", targets: ["gyrogate"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // A plugin only (`swift package generate-documentation`, Tests/run-tests.sh builds the
        // documentation with warnings as errors): nothing of it is linked into a product.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // JSON documents as values (parse, build, write) on FoundationEssentials alone.
        .target(name: "JSON", swiftSettings: strict),
        // Paths split and joined as text, trimming: what FoundationEssentials lacks of NSString.
        .target(name: "TextTools", swiftSettings: strict),
        // IANA time zones from the system's compiled tzdata (TZif) and civil-date arithmetic,
        // so that nothing needs Foundation's TimeZone/Calendar (and ICU).
        .target(name: "ZoneInfo", swiftSettings: strict),
        .target(name: "GatewayConfig", dependencies: ["JSON", "TextTools", "ZoneInfo"], swiftSettings: strict),
        // Detached POSIX threads for blocking loops (no Foundation Thread).
        .target(name: "PosixThreads", swiftSettings: strict),
        // The kernel's clock interfaces Glibc's module lacks (timerfd cancel-on-set, adjtimex).
        .systemLibrary(name: "CClock"),
        // The gateway's one time source: the continuous timeline, the true-time estimate that
        // follows the wall clock's steps, and whether it is synchronised (or dated by a board).
        .target(name: "HostTime", dependencies: ["CClock", "PosixThreads", .product(name: "Logging", package: "swift-log")],
                swiftSettings: strict),
        // Bluetooth LE host, bottom up: wire primitives, HCI, GAP advertising data, L2CAP, ATT.
        .target(name: "BluetoothWire", swiftSettings: strict),
        .target(name: "HCI", dependencies: ["BluetoothWire"], swiftSettings: strict),
        .target(name: "GAP", dependencies: ["BluetoothWire"], swiftSettings: strict),
        .target(name: "L2CAP", dependencies: ["BluetoothWire"], swiftSettings: strict),
        .target(name: "ATT", dependencies: ["BluetoothWire"], swiftSettings: strict),
        // Kernel HCI socket structures and termios setup in C (no libbluetooth: it is GPL).
        .target(name: "CHCISocket"),
        // The LE host: transports, HCI controller, connections, L2CAP, GATT client.
        .target(
            name: "BLEHost",
            dependencies: ["BluetoothWire", "HCI", "GAP", "L2CAP", "ATT", "CHCISocket", "PosixThreads",
                           .product(name: "Logging", package: "swift-log")],
            swiftSettings: dataPlane
        ),
        // Values the layers from the boards to the store share: why samples are missing.
        .target(name: "CaptureValues", swiftSettings: strict),
        // MetaWear protocol as values: commands, packets, module discovery, sample clock.
        .target(name: "MetaWear", dependencies: ["CaptureValues"], swiftSettings: strict),
        // MetaWear boards over a GATT link, and their supervision: initialisation, streaming, gaps.
        .target(
            name: "Sensors",
            dependencies: ["MetaWear", "CaptureValues", "Capture", "GyroStore", "HostTime", "BLEHost", "BluetoothWire", "PosixThreads",
                           .product(name: "Logging", package: "swift-log")],
            swiftSettings: dataPlane
        ),
        // SQLite's C API (apt: libsqlite3-dev), which GyroStore wraps.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // ioprio_set and a thread's nice value, for the store's background integrity check.
        .systemLibrary(name: "CIOPriority"),
        .target(
            name: "GyroStore",
            dependencies: ["CSQLite", "CIOPriority", "CaptureValues", "HostTime", "JSON", "PosixThreads", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        .target(
            name: "Capture",
            // MetaWear for the registers' scaling (SensorStream): counts to °/s and g.
            dependencies: ["CaptureValues", "GyroStore", "HostTime", "JSON", "MetaWear", "PosixThreads", "ZoneInfo", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        // Sessions out of the store for analysis: MetaBase's CSV, InfluxDB line protocol, JSON
        // Lines, streamed a chunk at a time (docs/export.md).
        .target(
            name: "Export",
            dependencies: ["GyroStore", "ZoneInfo", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        // The admin API: HTTP/1.1 + JSON on a unix socket, Prometheus metrics, systemd notify.
        .target(
            name: "Admin",
            dependencies: [
                "GatewayConfig", "GyroStore", "Capture", "Export", "HostTime", "JSON", "PosixThreads", "TextTools",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        // The live view: a read-only page with Server-Sent Events on TCP, assets in the binary.
        .target(
            name: "WebView",
            dependencies: [
                "Admin", "Capture", "GatewayConfig", "HostTime", "JSON",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        // libmosquitto (apt: libmosquitto-dev), the MQTT client library.
        .systemLibrary(name: "CMalloc"),
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        .target(
            name: "MQTTPublisher",
            dependencies: [
                "CMosquitto", "GatewayConfig", "GyroStore", "JSON", "PosixThreads", "TextTools", "ZoneInfo",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // A fleet of gateways: each gateway's report and the rule that names who captures a sensor.
        .target(name: "Fleet", dependencies: ["JSON", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .target(
            name: "Daemon",
            dependencies: [
                "Fleet", "GatewayConfig", "GyroStore", "Capture", "HostTime", "PosixThreads", "Admin", "WebView", "MQTTPublisher", "Sensors", "BLEHost", "MetaWear", "CMalloc", "JSON", "TextTools", "ZoneInfo",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // `gyrogate doctor`: checks that a configuration can run on this machine.
        .target(
            name: "Doctor",
            dependencies: [
                "GatewayConfig", "BLEHost", "MQTTPublisher", "Admin", "GyroStore", "HostTime", "TextTools", "ZoneInfo",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "gyrogate",
            dependencies: [
                "GatewayConfig", "GyroStore", "Capture", "Daemon", "Admin", "BLEHost", "BluetoothWire", "Doctor", "Export", "JSON", "Sensors", "TextTools", "ZoneInfo",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // A child process for the crash tests: feeds samples and reports what was acknowledged.
        .executableTarget(name: "store-feeder", dependencies: ["Capture", "GyroStore", .product(name: "Logging", package: "swift-log")],
                          path: "Tests/Tools/StoreFeeder"),
        // Fills a store with one long synthetic session, for the export's memory benchmark, or
        // with months of sessions up to a size (`fill`), for the full-store benchmark.
        .executableTarget(name: "store-filler", dependencies: ["Capture", "GyroStore", "CSQLite", "HostTime", "MetaWear", "ZoneInfo", "SupportCore",
                                                               .product(name: "Logging", package: "swift-log")],
                          path: "Tests/Tools/StoreFiller"),
        // `swift run -c release store-bench`
        .executableTarget(
            name: "store-bench",
            dependencies: ["Capture", "GyroStore", "CSQLite", .product(name: "Logging", package: "swift-log")],
            path: "Tests/Benchmarks/StoreBench"
        ),
        // `swift run -c release ble-bench`
        .executableTarget(name: "ble-bench", dependencies: ["BluetoothWire", "HCI", "L2CAP", "ATT"], path: "Tests/Benchmarks/BLEBench"),
        // `swift run -c release ble-host-bench`: the whole host against the bumble peer at 3200 Hz.
        .executableTarget(
            name: "ble-host-bench",
            dependencies: ["BLEHost", "BluetoothWire", "MetaWear", .product(name: "Logging", package: "swift-log")],
            path: "Tests/Benchmarks/BLEHostBench"
        ),
        // `swift run -c release metawear-bench`
        .executableTarget(name: "metawear-bench", dependencies: ["MetaWear"], path: "Tests/Benchmarks/MetaWearBench"),
        // `swift run -c release admin-bench`
        .executableTarget(
            name: "admin-bench",
            dependencies: ["Admin", "Capture", "GyroStore", "GatewayConfig", .product(name: "Logging", package: "swift-log")],
            path: "Tests/Benchmarks/AdminBench"
        ),
        // What every test target may share, without dependencies: the one seeded generator
        // (SplitMix64) and waits on events (Watched, Latch, OutputLines, NotifySocket).
        .target(name: "SupportCore", path: "Tests/SupportCore"),
        .target(name: "TestSupport", dependencies: ["SupportCore", "CMosquitto", .product(name: "Logging", package: "swift-log")], path: "Tests/Support"),
        .testTarget(name: "BluetoothWireTests", dependencies: ["BluetoothWire"]),
        .testTarget(name: "FleetTests", dependencies: ["Fleet", .product(name: "Logging", package: "swift-log")]),
        // Hex fixtures and the every-truncation check the wire codec tests share.
        .target(name: "WireTestSupport", dependencies: ["BluetoothWire"], path: "Tests/WireSupport"),
        .testTarget(name: "HCITests", dependencies: ["HCI", "BluetoothWire", "WireTestSupport"]),
        .testTarget(name: "GAPTests", dependencies: ["GAP", "BluetoothWire", "WireTestSupport"]),
        .testTarget(name: "L2CAPTests", dependencies: ["L2CAP", "BluetoothWire", "WireTestSupport"]),
        .testTarget(name: "ATTTests", dependencies: ["ATT", "BluetoothWire", "WireTestSupport"]),
        .testTarget(name: "BLEFuzzTests", dependencies: ["BluetoothWire", "HCI", "GAP", "L2CAP", "ATT", "SupportCore"]),
        .testTarget(name: "MetaWearTests", dependencies: ["MetaWear", "SupportCore"]),
        .testTarget(name: "CaptureValuesTests", dependencies: ["CaptureValues", "SupportCore"]),
        // The emulated MetaWear (Tests/Peers) as a child process, for the tests that drive it.
        .target(name: "PeerSupport", dependencies: ["SupportCore"], path: "Tests/PeerSupport"),
        .testTarget(name: "SensorsTests", dependencies: ["CaptureValues", "Sensors", "PosixThreads", "MetaWear", "Capture", "GyroStore", "BLEHost", "TestSupport", "PeerSupport",
                                                         .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "BLEHostTests", dependencies: ["BLEHost", "PosixThreads", "BluetoothWire", "CHCISocket", "HCI", "GAP", "L2CAP", "ATT", "MetaWear", "PeerSupport", "SupportCore",
                                                         .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "GatewayConfigTests", dependencies: ["GatewayConfig", "ZoneInfo"]),
        .testTarget(name: "JSONTests", dependencies: ["JSON", "SupportCore"]),
        .testTarget(name: "PosixThreadsTests", dependencies: ["PosixThreads", "SupportCore"]),
        .testTarget(name: "HostTimeTests", dependencies: ["HostTime", "PosixThreads"]),
        .testTarget(name: "TextToolsTests", dependencies: ["TextTools"]),
        .testTarget(name: "ZoneInfoTests", dependencies: ["ZoneInfo", "SupportCore"]),
        .testTarget(name: "ExportTests", dependencies: ["Export", "Capture", "GyroStore", "MetaWear", "ZoneInfo", "SupportCore", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "GyroStoreTests", dependencies: ["GyroStore", "JSON", "TestSupport", "CSQLite"]),
        .testTarget(name: "AdminTests", dependencies: ["Admin", "Capture", "GyroStore", "GatewayConfig", "JSON", "TestSupport", .product(name: "NIOCore", package: "swift-nio"),
                                                     .product(name: "NIOPosix", package: "swift-nio")]),
        // A child process for the MQTT crash test: captures sessions and publishes them.
        .executableTarget(name: "mqtt-feeder", dependencies: ["Capture", "GyroStore", "MQTTPublisher", .product(name: "Logging", package: "swift-log")],
                          path: "Tests/Tools/MQTTFeeder"),
        // `swift run -c release mqtt-bench [DOCUMENTS]`
        .executableTarget(
            name: "mqtt-bench",
            dependencies: ["Capture", "GyroStore", "MQTTPublisher", "Daemon", "CMosquitto", "CSQLite", "TestSupport",
                           .product(name: "Logging", package: "swift-log")],
            path: "Tests/Benchmarks/MQTTBench"
        ),
        .testTarget(
            name: "MQTTPublisherTests",
            dependencies: ["MQTTPublisher", "Capture", "GatewayConfig", "GyroStore", "TestSupport", "CMosquitto", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(name: "WebViewTests", dependencies: ["WebView", "Admin", "Capture", "GyroStore", "GatewayConfig", "TestSupport",
                                                       .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio")]),
        .testTarget(name: "DoctorTests", dependencies: ["Doctor", "BLEHost", "GatewayConfig", "TestSupport", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "CaptureTests", dependencies: ["CaptureValues", "Capture", "GyroStore", "HostTime", "MetaWear", "ZoneInfo", "TestSupport"]),
        // Home Assistant MQTT discovery against a real mosquitto.
        .testTarget(
            name: "HomeAssistantTests",
            dependencies: ["Daemon", "GatewayConfig", "MQTTPublisher", "GyroStore", "Capture", "Sensors", "TestSupport",
                           .product(name: "Logging", package: "swift-log")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
