// swift-tools-version: 6.1
import PackageDescription

// Library products an app links stay free of server frameworks: Hummingbird, GraphQL execution and
// jwt-kit arrive only with the local backend and the CLI.
let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "VortexRealtime",
    // No watchOS: Apple's TN3135 rules out URLSessionWebSocketTask for ordinary watchOS apps (README, "Platforms").
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17)],
    products: [
        .library(name: "SubscriberCore", targets: ["SubscriberCore"]),
        .library(name: "WebSocketNIO", targets: ["WebSocketNIO"]),
        .library(name: "WebSocketURLSession", targets: ["WebSocketURLSession"]),
        .library(name: "AppSyncEventsTransport", targets: ["AppSyncEventsTransport"]),
        .library(name: "GraphQLTransport", targets: ["GraphQLTransport"]),
        .library(name: "BackendNotifier", targets: ["BackendNotifier"]),
        .library(name: "Composition", targets: ["Composition"]),
        .library(name: "RealtimePreflight", targets: ["RealtimePreflight"]),
        .library(name: "RealtimeStore", targets: ["RealtimeStore"]),
        .library(name: "RealtimeTesting", targets: ["RealtimeTesting"]),
        .library(name: "LocalBackend", targets: ["LocalBackend"]),
        .executable(name: "vortex-realtime", targets: ["VortexRealtimeCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket.git", from: "1.6.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        // Already in the graph through SwiftNIO; named for RealtimeBench's counters (Synchronization's Atomic needs
        // macOS 15 / iOS 18, newer than the package's platforms).
        .package(url: "https://github.com/apple/swift-atomics.git", from: "1.3.0"),
        // Test-only: the OpenAPI document of the nine payloads is loaded and checked against the models.
        .package(url: "https://github.com/mattpolzin/OpenAPIKit.git", from: "6.4.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        // Test-only: certificates for the TLS tests of the NIO connector (both in the graph already, through jwt-kit).
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        // Documentation only: `swift package generate-documentation --target BackendNotifier`.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"),
        // The local backend and the CLI only: never linked by the library products an app uses.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        .package(url: "https://github.com/GraphQLSwift/GraphQL.git", from: "4.3.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        .target(
            name: "SubscriberCore",
            dependencies: [
                .product(name: "Logging", package: "swift-log")
            ],
            swiftSettings: strictSettings
        ),
        // The WebSocket seam on SwiftNIO directly. Linked by Composition on Linux only, so an iOS app that links
        // BackendNotifier + Composition links neither SwiftNIO nor NIOSSL.
        // Linux's `timerfd`, which Glibc's module does not export: a link's own timer (WebSocketNIO's `TimerFDLinkTimer`).
        .target(name: "CTimerFD"),
        .target(
            name: "WebSocketNIO",
            dependencies: [
                "SubscriberCore",
                .target(name: "CTimerFD", condition: .when(platforms: [.linux, .android])),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        // The WebSocket seam on `URLSessionWebSocketTask`. Linked by Composition on Apple platforms only; compiled
        // everywhere FoundationNetworking exists, so its tests run on Linux over a mock task.
        .target(
            name: "WebSocketURLSession",
            dependencies: [
                "SubscriberCore",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        // The names both protocols' events go by (the nine kinds, their `eventType` and channel names, the device
        // payload keys), spelled once for the client and the local backend: the server imports it, never the client.
        // No product: `BackendNotifier` re-exports it.
        .target(name: "VortexVocabulary", swiftSettings: strictSettings),
        // The AppSync Events wire vocabulary the client and the local backend share (channel and id rules, service
        // limits, the header subprotocol, SigV4), so the server never imports the client. `package` access only: no
        // product, nothing an app names.
        .target(
            name: "AppSyncEventsWire",
            dependencies: [
                "SubscriberCore",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "RealtimeTesting",
            dependencies: ["SubscriberCore", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings
        ),
        .target(
            name: "AppSyncEventsTransport",
            dependencies: [
                "SubscriberCore", "AppSyncEventsWire",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .target(name: "GraphQLTransport", dependencies: ["SubscriberCore"], swiftSettings: strictSettings),
        .target(
            name: "BackendNotifier",
            dependencies: [
                .product(name: "CoreMetrics", package: "swift-metrics"),
                "SubscriberCore", "VortexVocabulary",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strictSettings
        ),
        // The state an app's views read, healed by backfills (issue 28); built on the notifier's public API only.
        .target(
            name: "RealtimeStore",
            dependencies: ["BackendNotifier", "SubscriberCore"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "Composition",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                "SubscriberCore", "AppSyncEventsTransport", "GraphQLTransport", "BackendNotifier",
                .target(name: "WebSocketNIO", condition: .when(platforms: [.linux, .android, .windows, .openbsd])),
                .target(
                    name: "WebSocketURLSession",
                    condition: .when(platforms: [.macOS, .macCatalyst, .iOS, .tvOS, .watchOS, .visionOS])),
            ],
            swiftSettings: strictSettings
        ),
        // Checks a server before a rollback or a flip (`vortex-realtime preflight`, the drill): an operations tool, so an
        // app does not link its GraphQL reader and schema introspection unless it imports it.
        .target(
            name: "RealtimePreflight",
            dependencies: [
                "SubscriberCore", "BackendNotifier", "Composition",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "LocalBackend",
            dependencies: [
                .product(name: "NIOFoundationEssentialsCompat", package: "swift-nio"),
                .product(name: "OrderedCollections", package: "swift-collections"),
                "SubscriberCore", "AppSyncEventsWire", "VortexVocabulary",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "GraphQL", package: "GraphQL"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "RealtimeDrill",
            dependencies: [
                "SubscriberCore", "BackendNotifier", "Composition", "LocalBackend", "RealtimeStore", "RealtimePreflight",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "HotPathBenchmark",
            dependencies: [
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                "WebSocketNIO",
                "SubscriberCore", "AppSyncEventsTransport", "LocalBackend",
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/HotPath",
            swiftSettings: strictSettings
        ),
        // The suite's client process (Benchmarks/Suite drives it): only what the library products already need.
        .executableTarget(
            name: "RealtimeBench",
            dependencies: [
                "WebSocketNIO",
                "SubscriberCore", "AppSyncEventsTransport", "GraphQLTransport", "BackendNotifier", "RealtimeStore",
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Atomics", package: "swift-atomics"),
            ],
            path: "Benchmarks/RealtimeBench",
            swiftSettings: strictSettings
        ),
        // Issue 19's lifecycle figures (detection and recovery after each lifecycle event) and the bare process of the
        // idle wake-up measurement.
        // glibc's heap figures for the session memory probe (LifecycleBench sessions).
        .target(name: "CHeapInUse", path: "Benchmarks/CHeapInUse"),
        .executableTarget(
            name: "LifecycleBench",
            dependencies: [
                "WebSocketNIO", "SubscriberCore", "AppSyncEventsTransport", "GraphQLTransport", "LocalBackend", "RealtimeTesting",
                "BackendNotifier", "Composition",
                .target(name: "CHeapInUse", condition: .when(platforms: [.linux])),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Benchmarks/Lifecycle",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "VortexRealtimeCLI",
            dependencies: [
                "SubscriberCore", "AppSyncEventsWire", "AppSyncEventsTransport", "GraphQLTransport", "BackendNotifier", "Composition",
                "LocalBackend", "RealtimeDrill", "RealtimeStore", "RealtimePreflight",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        // Test support, never a product: the WebSocket server on SwiftNIO that the NIO connector's tests (scripted) and
        // the fuzz suite (hostile) configure, and the certificate authority the TLS tests make. Kept out of
        // RealtimeTesting so an app's test target does not link NIO.
        .target(
            name: "NIOTestServer",
            dependencies: [
                "SubscriberCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/NIOTestServer",
            swiftSettings: strictSettings
        ),
        // Test support, never a product: a mock `WebSocketTask` as hostile as Apple's (it ignores Swift cancellation, may
        // never answer a close) and a server that hands one to each connection of the URLSession connector.
        .target(
            name: "URLSessionTestSupport",
            dependencies: ["WebSocketURLSession", "SubscriberCore", "RealtimeTesting"],
            path: "Tests/URLSessionTestSupport",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SubscriberCoreTests",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                "SubscriberCore", "RealtimeTesting",
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(name: "VortexVocabularyTests", dependencies: ["VortexVocabulary"], swiftSettings: strictSettings),
        // The NIO connector on real sockets, against the scripted server of NIOTestServer; over TLS too, with
        // certificates made for each test.
        .testTarget(
            name: "WebSocketNIOTests",
            dependencies: [
                "WebSocketNIO", "NIOTestServer", "SubscriberCore", "RealtimeTesting",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strictSettings
        ),
        // The URLSession connector over a mock task (no sockets), on Linux too.
        .testTarget(
            name: "WebSocketURLSessionTests",
            dependencies: ["WebSocketURLSession", "URLSessionTestSupport", "SubscriberCore", "RealtimeTesting"],
            swiftSettings: strictSettings
        ),
        // The client, and the wire vocabulary it shares with the local backend (AppSyncEventsWire: channel names,
        // limits, SigV4 against botocore when the Python peers are set up).
        .testTarget(
            name: "AppSyncEventsTransportTests",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"), "AppSyncEventsTransport", "AppSyncEventsWire", "SubscriberCore",
                "RealtimeTesting",
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "GraphQLTransportTests",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                "WebSocketNIO", "GraphQLTransport", "SubscriberCore", "RealtimeTesting",
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "BackendNotifierTests",
            dependencies: [
                "BackendNotifier", "SubscriberCore", "RealtimeTesting",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "OpenAPIKit", package: "OpenAPIKit"),
                .product(name: "Yams", package: "Yams"),
            ],
            resources: [.copy("Fixtures")],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "RealtimeStoreTests",
            dependencies: ["RealtimeStore", "BackendNotifier", "SubscriberCore", "RealtimeTesting"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "CompositionTests",
            dependencies: [
                "Composition", "BackendNotifier", "SubscriberCore", "RealtimeTesting", "AppSyncEventsTransport", "GraphQLTransport",
                "WebSocketURLSession", "URLSessionTestSupport",
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "RealtimePreflightTests",
            dependencies: ["RealtimePreflight", "Composition", "BackendNotifier", "SubscriberCore", "RealtimeTesting"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "LocalBackendTests",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OrderedCollections", package: "swift-collections"),
                "WebSocketNIO",
                "LocalBackend", "SubscriberCore", "AppSyncEventsWire", "AppSyncEventsTransport", "GraphQLTransport", "RealtimeTesting",
                .product(name: "GraphQL", package: "GraphQL"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        // Issue 9 item 4: a seeded hostile WebSocket server (raw NIO frames) against both transports over real sockets.
        .testTarget(
            name: "FuzzTests",
            dependencies: [
                "WebSocketNIO", "NIOTestServer",
                "AppSyncEventsTransport", "GraphQLTransport", "SubscriberCore", "RealtimeTesting",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "WebSocketNIO", "NIOTestServer",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                "RealtimeDrill", "LocalBackend", "Composition", "BackendNotifier", "SubscriberCore", "RealtimeTesting",
                "AppSyncEventsTransport", "GraphQLTransport", "RealtimeStore", "RealtimePreflight",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
    ]
)
