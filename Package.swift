// swift-tools-version:6.1
// Tactus: a tempo-analysis server. See docs/ARCHITECTURE.md for the layout of the modules.
import Foundation
import PackageDescription

/// Built-in detectors. `NAME` is the folder `Plugins/NAME`, holding the target `NAMEDetector`
/// whose type `NAMEDetector` conforms to `TempoDetector` and depends only on the detector
/// interface, the DSP building blocks and the shared vote (TactusVote). Adding a detector is its folder and one line here:
/// the registry (`BuiltinDetectors` in TactusAnalysis) is generated from this list by the
/// DetectorRegistry build plugin, and `Tests/NAMETests`, when that folder exists, is its test target.
let builtinDetectors = [
    "CombFilter",
    "StatisticalEnergy",
    "Autocorrelation",
    "BeatNet",
]

/// What a built-in detector needs beyond the detector interface, the DSP blocks and the vote.
let builtinDetectorDependencies: [String: [Target.Dependency]] = [
    "BeatNet": ["CBeatNetWeights"],
]

/// Files in a detector's folder that are not its sources: its tools and its notes.
func detectorExcludes(_ name: String) -> [String] {
    ["tools", "README.md"].filter { FileManager.default.fileExists(atPath: Context.packageDirectory + "/Plugins/\(name)/\($0)") }
}

/// The built-in detectors' targets.
let builtinDetectorTargets: [Target] = builtinDetectors.map { name in
    let common: [Target.Dependency] = ["TactusDetector", "TactusDSP", "TactusVote"]
    return .target(
        name: "\(name)Detector", dependencies: common + (builtinDetectorDependencies[name] ?? []),
        path: "Plugins/\(name)", exclude: detectorExcludes(name))
}

/// The test targets of the built-in detectors that have a folder `Tests/NAMETests`.
let builtinDetectorTests: [Target] = builtinDetectors
    .filter { FileManager.default.fileExists(atPath: Context.packageDirectory + "/Tests/\($0)Tests") }
    .map { name in
        .testTarget(
            name: "\(name)Tests",
            dependencies: [.target(name: "\(name)Detector"), "TactusDetector", "TactusDSP", "TactusDetectorTestSupport", "TactusTestSupport"])
    }

let package = Package(
    name: "Tactus",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "tactus", targets: ["tactus"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: ["FullFoundation"]),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.34.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
    ],
    targets: [
        // C libraries, found through pkg-config.
        .systemLibrary(name: "CMPG123", pkgConfig: "libmpg123", providers: [.apt(["libmpg123-dev"])]),
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CFLAC", pkgConfig: "flac", providers: [.apt(["libflac-dev"])]),
        .systemLibrary(name: "CZeroMQ", pkgConfig: "libzmq", providers: [.apt(["libzmq3-dev"])]),
        .systemLibrary(name: "CFFTW", pkgConfig: "fftw3f", providers: [.apt(["libfftw3-dev"])]),
        .systemLibrary(name: "CRubberBand", pkgConfig: "rubberband", providers: [.apt(["librubberband-dev"])]),
        .systemLibrary(name: "CSoxr", pkgConfig: "soxr", providers: [.apt(["libsoxr-dev"])]),
        // BeatNet's trained weights (CC BY 4.0, see its README.md), embedded in the binary by the assembler.
        .target(
            name: "CBeatNetWeights", exclude: ["beatnet-model-1.f32", "README.md"],
            cSettings: [
                .define("BEATNET_WEIGHTS_PATH", to: "\"\(Context.packageDirectory)/Sources/CBeatNetWeights/beatnet-model-1.f32\"")
            ]),

        // The library's value types that cross the wire (song ids and tags, queries, matches,
        // comparisons, playlists and profiles, reference tempi, the library's errors, the stable
        // error codes): Codable with explicit wire names, no SQLite.
        .target(
            name: "TactusModel",
            dependencies: [
                "TactusDetector", .product(name: "Crypto", package: "swift-crypto"), .product(name: "HeapModule", package: "swift-collections"),
            ]
        ),
        // Audio input: bytes or a path in, mono float blocks and metadata out.
        .target(
            name: "TactusAudio",
            dependencies: [
                "CMPG123", "CSndFile", "CFLAC", "TactusModel",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // DSP building blocks shared by the detectors (FFTW-backed, libsoxr for resampling): pure signal processing.
        .target(name: "TactusDSP", dependencies: ["CFFTW", "CSoxr", "TactusDetector"]),
        // What a detector is: descriptor, parameters, streaming session, analysis result, consensus.
        .target(name: "TactusDetector"),
        // The mechanics the default presets share: the windowed vote over a song, its parameter
        // declarations, the metrical-level decision, and the detector output it produces.
        .target(name: "TactusVote", dependencies: ["TactusDSP", "TactusDetector"]),
    ] + builtinDetectorTargets + [
        // The registry of built-in detectors, whole-song analysis of a decoded song.
        .target(
            name: "TactusAnalysis",
            dependencies: ["TactusAudio", "TactusModel", "TactusDetector", "TactusDSP"]
                + builtinDetectors.map { .target(name: "\($0)Detector") },
            plugins: ["DetectorRegistryPlugin"]
        ),
        // Writes the registry of built-in detectors (`BuiltinDetectors`) from `builtinDetectors`.
        .plugin(
            name: "DetectorRegistryPlugin", capability: .buildTool(), dependencies: ["tactus-detector-registry"],
            path: "BuildTools/DetectorRegistryPlugin"),
        .executableTarget(name: "tactus-detector-registry", path: "BuildTools/DetectorRegistryGenerator"),
        // A small Swift wrapper over the libzmq C API: context, sockets, options, poller, CURVE keys.
        .target(name: "TactusZMQ", dependencies: ["CZeroMQ"]),
        // The wire protocol: message types and their encoding to and from ZeroMQ frames.
        .target(name: "TactusProtocol", dependencies: ["TactusDetector", "TactusModel"]),
        // The library: songs, analyses, consensus and reference tempi in SQLite (GRDB); song blobs.
        .target(
            name: "TactusStore",
            dependencies: [
                "TactusDetector", "TactusModel",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The library's answers to the protocol's library requests, and the scan of the library
        // roots against the library, for the coordinator and for the `--db` commands.
        .target(
            name: "TactusLibraryService", dependencies: ["TactusProtocol", "TactusStore", "TactusModel", "TactusDetector", "TactusLibraryRoots"]),
        // Files below the library roots, opened safely (component by component, no symbolic
        // links), hashed and read in bounded pieces, and walked: the coordinator and the workers
        // that share its host both open songs through it. Its errors are its own (LibraryRootsError).
        .target(name: "TactusLibraryRoots", dependencies: ["TactusModel"]),
        // The coordinator, a broker only: the durable job queue, dispatch to workers, the client
        // frontend, events. It is given the audio probe; it never decodes audio.
        .target(
            name: "TactusCoordinator",
            dependencies: [
                "TactusZMQ", "TactusProtocol", "TactusStore", "TactusLibraryService", "TactusModel", "TactusDetector",
                "TactusLibraryRoots", .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        // The coordinator's audio probe built on TactusAudio, which `tactus serve` gives it.
        .target(
            name: "TactusAudioProbe",
            dependencies: [
                "TactusCoordinator", "TactusAudio", "TactusStore", "TactusModel", "TactusProtocol", "TactusDetector", "TactusLibraryRoots",
            ]
        ),
        // Passing open file descriptors over a Unix socket (SCM_RIGHTS), for the service hosts.
        .target(name: "CDescriptorPassing"),
        // What parses or computes on client content runs in service host processes (`tactus
        // service-host`), supervised with a memory and time limit: the channel to them, the pool
        // that starts and replaces them, and the coordinator's probe, renderer and recording
        // analyzer that call them. It never links a decoder itself.
        .target(
            name: "TactusServiceHost",
            dependencies: [
                "CDescriptorPassing", "TactusCoordinator", "TactusProtocol", "TactusModel", "TactusStore", "TactusLibraryRoots", "TactusLibraryService",
                "TactusLocalWorkers", .product(name: "Logging", package: "swift-log"),
            ]),
        // Supervision of the local worker processes that `tactus serve` starts.
        .target(name: "TactusLocalWorkers", dependencies: [.product(name: "Logging", package: "swift-log")]),
        // `tactus worker`: one detector offered to a coordinator's backend over the wire protocol.
        .target(
            name: "TactusWorker",
            dependencies: [
                "TactusZMQ", "TactusProtocol", "TactusAnalysis", "TactusAudio", "TactusDetector", "TactusLibraryRoots", "TactusModel",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Figures of a song's analyses and of a library comparison: a small SVG builder, PNG
        // through rsvg-convert, and terminal sparklines.
        .target(name: "TactusPlot", dependencies: ["TactusDetector", "TactusModel"]),
        // The client side of the wire protocol: requests and replies to the frontend, events, and
        // the client workflows (submitting while the server is busy, batches of songs followed
        // to the end, several connections submitting at once).
        .target(name: "TactusClient", dependencies: ["TactusZMQ", "TactusProtocol", "TactusModel"]),
        // `tactus web`: the HTTP gateway (pages, the /api/v1 HTTP API, /metrics), a client of the
        // coordinator like any other over TactusClient; it never opens the library file.
        .target(
            name: "TactusWeb",
            dependencies: [
                "TactusClient", "TactusProtocol", "TactusModel", "TactusDetector", "TactusPlot", "TactusZMQ",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                // The HTTP parts a connection's handler sees (HTTPConnectionPlaces).
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // The OpenAPI document, generated by protocol/openapi/generate.py: `PackageResources.openapi_yaml`.
            resources: [.embedInCode("Resources/openapi.yaml")]
        ),
        // Songs rendered at another tempo (Rubber Band), written as WAV.
        .target(
            name: "TactusStretch", dependencies: ["CRubberBand", "CSndFile", "TactusAudio", "TactusAnalysis", "TactusDSP", "TactusModel"]),
        // BPM tags read and written through TagLib's C++ API (libtag1-dev), behind a plain C header.
        .target(name: "CTagLib", linkerSettings: [.linkedLibrary("tag")]),
        // A file's BPM, title and artist tags; BPM tags written without changing the audio (checked by decoding);
        // tags read into a library's reference tempi and its tempi written into tags.
        .target(name: "TactusTags", dependencies: ["CTagLib", "TactusAudio", "TactusModel", "TactusLibraryRoots", "TactusLibraryService"]),
        // Cadence (steps per minute) of accelerometer recordings: CSV of phone loggers, resampling, autocorrelation.
        .target(name: "TactusCadence", dependencies: ["TactusDSP", "TactusModel"]),
        // The command-line tool.
        .executableTarget(
            name: "tactus",
            dependencies: [
                "TactusAudio", "TactusAnalysis", "TactusDetector", "TactusModel", "TactusStore", "TactusLibraryService",
                "TactusProtocol", "TactusCoordinator", "TactusAudioProbe", "TactusLocalWorkers", "TactusWorker", "TactusClient",
                "TactusPlot", "TactusZMQ", "TactusCadence", "TactusStretch", "TactusTags", "TactusLibraryRoots", "TactusWeb",
                "TactusServiceHost",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Benchmarks run by `make bench`.
        .executableTarget(
            name: "tactus-bench",
            dependencies: [
                "TactusAudio", "TactusAnalysis", "TactusDetector", "TactusDSP", "TactusModel", "TactusStore", "TactusTestSupport",
                "TactusClient", "TactusProtocol", "TactusZMQ", "TactusCadence", "TactusStretch",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Fuzz targets (`make fuzz`): libFuzzer entry points when built with
        // `-sanitize=fuzzer,address`; otherwise tools that write the seed corpus and replay inputs.
        .systemLibrary(name: "CLibFuzzer"),
        .executableTarget(
            name: "tactus-fuzz-protocol",
            dependencies: ["CLibFuzzer", "TactusProtocol", "TactusModel", "TactusDetector", "TactusTestSupport"]),
        .executableTarget(name: "tactus-fuzz-audio", dependencies: ["CLibFuzzer", "TactusAudio", "TactusTestSupport"]),
        .executableTarget(
            name: "tactus-fuzz-workout", dependencies: ["CLibFuzzer", "TactusCadence", "TactusModel", "TactusTestSupport"]),
        // What the tests and the benchmarks share: synthesised audio (click tracks, drum patterns,
        // ramps) written through libsndfile, temporary directories, running `tactus` and
        // `tactus serve`, library fixtures, a fake frontend.
        .target(
            name: "TactusTestSupport",
            dependencies: ["CSndFile", "TactusAudio", "TactusModel", "TactusDetector", "TactusStore", "TactusProtocol", "TactusZMQ"]),
        // The behaviour every built-in detector shares, as Swift Testing checks its tests call.
        .target(name: "TactusDetectorTestSupport", dependencies: ["TactusTestSupport", "TactusAudio", "TactusDetector"]),

        .testTarget(name: "TactusDetectorTests", dependencies: ["TactusDetector"]),
        .testTarget(name: "TactusDSPTests", dependencies: ["TactusDSP", "TactusDetector"]),
        .testTarget(name: "TactusVoteTests", dependencies: ["TactusVote", "TactusDSP", "TactusDetector", "TactusTestSupport"]),
        // The behaviour every registered detector's default preset shares.
        .testTarget(
            name: "DetectorConformanceTests",
            dependencies: ["TactusAnalysis", "TactusDetector", "TactusDetectorTestSupport", "TactusTestSupport"]),
        .testTarget(name: "TactusAudioTests", dependencies: ["CSndFile", "TactusAudio", "TactusDSP", "TactusModel", "TactusTestSupport"]),
        // The tests that run the `tactus` binary (its commands, `tactus worker` against a fake
        // coordinator); `tactus serve`'s end-to-end tests are TactusServerTests.
        .testTarget(
            name: "TactusCLITests",
            dependencies: [
                "TactusAudio", "TactusModel", "TactusStore", "TactusProtocol", "TactusDetector", "TactusPlot", "TactusWorker",
                "TactusAnalysis", "TactusZMQ", "TactusTestSupport", "TactusClient",
            ]),
        .testTarget(name: "TactusZMQTests", dependencies: ["TactusZMQ", "TactusTestSupport"]),
        .testTarget(
            name: "TactusProtocolTests", dependencies: ["TactusProtocol", "TactusDetector", "TactusModel", "TactusZMQ"]),
        .testTarget(
            name: "TactusCoordinatorTests",
            dependencies: [
                "TactusCoordinator", "TactusAudioProbe", "TactusZMQ", "TactusProtocol", "TactusModel", "TactusStore", "TactusAudio",
                "TactusDetector", "TactusTestSupport", "TactusServiceHost", "TactusClient", .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "TactusServiceHostTests",
            dependencies: [
                "TactusServiceHost", "TactusModel", "TactusProtocol", "TactusStore", "TactusLibraryRoots", "TactusLibraryService",
                "TactusTestSupport", .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(name: "TactusLocalWorkersTests", dependencies: ["TactusLocalWorkers", .product(name: "Logging", package: "swift-log")]),
        .testTarget(
            name: "TactusServerTests",
            dependencies: [
                "TactusAnalysis", "TactusCoordinator", "TactusAudioProbe", "TactusZMQ", "TactusProtocol", "TactusModel", "TactusStore",
                "TactusAudio", "TactusDetector", "TactusTestSupport",
            ]),
        .testTarget(
            name: "TactusStoreTests", dependencies: ["TactusStore", "TactusModel", "TactusDetector", "TactusAudio", "TactusTestSupport"]),
        .testTarget(
            name: "TactusClientTests",
            dependencies: [
                "TactusClient", "TactusProtocol", "TactusModel", "TactusZMQ", "TactusAudio", "TactusDetector", "TactusTestSupport",
            ]),
        .testTarget(
            name: "TactusPlotTests",
            dependencies: [
                "TactusPlot", "TactusModel", "TactusStore", "TactusAnalysis", "TactusAudio", "TactusDetector", "TactusTestSupport",
            ]),
        .testTarget(
            name: "TactusAnalysisTests",
            dependencies: ["TactusAnalysis", "TactusAudio", "TactusDetector", "TactusDSP", "TactusTestSupport"]),
        .testTarget(name: "TactusCadenceTests", dependencies: ["TactusCadence", "TactusModel", "TactusTestSupport"]),
        .testTarget(
            name: "TactusTagsTests",
            dependencies: ["TactusTags", "TactusAudio", "TactusModel", "TactusLibraryRoots", "TactusTestSupport"]),
        .testTarget(name: "TactusWebTests", dependencies: ["TactusWeb", "TactusTestSupport"]),
        .testTarget(name: "TactusStretchTests", dependencies: ["TactusStretch", "TactusAnalysis", "TactusAudio", "TactusTestSupport"]),
    ] + builtinDetectorTests
)
