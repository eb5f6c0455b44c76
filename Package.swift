// swift-tools-version: 6.1
import Foundation
import PackageDescription

// Dependencies point one way:
// sampler → SamplerKit → {JACKBackend, SoundFiles, Patches, Scheduling} → SamplerCore.
let package = Package(
    name: "sampler",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "SamplerKit", targets: ["SamplerKit"]),
        .library(name: "SamplerCore", targets: ["SamplerCore"]),
        .executable(name: "sampler", targets: ["sampler"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-numerics", from: "1.0.0"),
        .package(url: "https://github.com/ordo-one/malloc-interposer", from: "1.6.0"),
    ],
    targets: [
        // C libraries.
        .target(name: "CJACK", path: "Sources/CJACK", linkerSettings: [.linkedLibrary("jack")]),
        .systemLibrary(name: "CSndFile", path: "Sources/CSndFile", pkgConfig: "sndfile"),
        .systemLibrary(name: "CSampleRate", path: "Sources/CSampleRate", pkgConfig: "samplerate"),

        // Pure Swift engine: everything the real-time thread runs.
        // The lock-free ring, in a module of its own so that its @inlinable generic code is
        // specialized and checked inside the @_noLocks render path that uses it.
        .target(name: "LockFree"),
        // A pthread-mutex box for state shared with JACK's and the control threads (visible to
        // ThreadSanitizer, which Synchronization.Mutex is not on Linux).
        .target(name: "Locking"),
        .target(name: "SamplerCore", dependencies: ["LockFree", .product(name: "RealModule", package: "swift-numerics")]),
        .target(name: "SoundFiles", dependencies: ["SamplerCore", "Locking", "CSndFile", "CSampleRate"]),
        .target(name: "Patches", dependencies: ["SamplerCore"]),
        .target(name: "Scheduling", dependencies: ["SamplerCore"]),
        .target(name: "JACKBackend", dependencies: ["SamplerCore", "LockFree", "Locking", "CJACK"]),
        // liblo (Debian liblo-dev), for OSC over UDP.
        .systemLibrary(name: "CLiblo", path: "Sources/CLiblo", pkgConfig: "liblo", providers: [.apt(["liblo-dev"])]),
        .target(name: "OSC", dependencies: ["CLiblo", "Locking"]),
        .target(name: "SamplerKit", dependencies: ["SamplerCore", "SoundFiles", "Patches", "Scheduling", "JACKBackend", "Locking", "OSC"]),
        .executableTarget(name: "sampler", dependencies: [
            "SamplerKit", .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // An independent JACK client that records ports with their device-clock frames; used by the
        // integration tests to check what really left the engine's ports.
        .executableTarget(name: "sampler-capture", dependencies: ["CJACK"], path: "Sources/SamplerCapture"),
        .executableTarget(name: "sampler-midi-send", dependencies: ["CJACK"], path: "Sources/SamplerMIDISend"),
        // An independent OSC client (liblo only) for the tests of the OSC interfaces.
        .executableTarget(name: "sampler-osc-send", dependencies: ["CLiblo"], path: "Sources/SamplerOSCSend"),
        // An independent JACK client that records MIDI events with their device-clock frames (the
        // MIDI clock tests).
        .executableTarget(name: "sampler-midi-capture", dependencies: ["CJACK"], path: "Sources/SamplerMIDICapture"),
        // A program that imports only SamplerKit: proves the public API is enough to load files,
        // build buffers, play, stop and feed a PlayerNode.
        .executableTarget(name: "samplerkit-example", dependencies: ["SamplerKit"], path: "Examples/SamplerKitOnly"),
        // `make soak`: the randomized control side of a long live run.
        .executableTarget(name: "sampler-soak", dependencies: ["SamplerKit"], path: "Sources/SamplerSoak"),
        // Fault injection: a client upstream of the sampler that sleeps inside its cycle on demand.
        .executableTarget(name: "sampler-disturb", dependencies: ["CJACK"], path: "Sources/SamplerDisturb"),

        // `make bench`: a release-built benchmark executable, and the same mixing job as a plain C
        // loop for reference.
        .executableTarget(name: "sampler-bench", dependencies: [
            "SamplerCore", "SamplerKit", "SoundFiles", "Scheduling", "CMixReference",
            .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
        ], path: "Benchmarks/SamplerBench"),
        .target(name: "CMixReference", path: "Benchmarks/CMixReference",
                cSettings: [.unsafeFlags(["-O3", "-march=native"])]),
        // `scripts/stream-bench.sh`: memory and CPU of 1, 4 and 16 streamed files on a dummy server.
        .executableTarget(name: "sampler-stream-bench", dependencies: ["SamplerKit", "SoundFiles"], path: "Benchmarks/StreamBench"),

        .testTarget(name: "SamplerCoreTests", dependencies: ["SamplerCore", "LockFree"]),
        .testTarget(name: "SoundFilesTests", dependencies: ["SoundFiles", "Locking"]),
        .testTarget(name: "PatchesTests", dependencies: ["Patches"]),
        .testTarget(name: "SchedulingTests", dependencies: ["Scheduling"]),
        .testTarget(name: "JACKBackendTests", dependencies: ["JACKBackend"]),
        .testTarget(name: "SamplerKitTests", dependencies: ["SamplerKit", "JACKTestSupport", "Locking"]),
        // Shared by the test targets that need a real JACK server and an external capture.
        .target(name: "JACKTestSupport", dependencies: ["SamplerCore", "Locking"], path: "Tests/JACKTestSupport"),
        .testTarget(name: "AllocationTests", dependencies: [
            "SamplerCore", "JACKBackend", "SamplerKit", "JACKTestSupport",
            .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
        ]),
        .testTarget(name: "IntegrationTests", dependencies: ["SamplerKit", "JACKBackend", "JACKTestSupport"]),
    ],
    swiftLanguageModes: [.v6],
    cxxLanguageStandard: .cxx17
)

// Ableton Link (issue 17) is GPL-2.0-or-later: it is compiled in only when SAMPLER_LINK=1 (`make
// build LINK=1`; `make test` always builds it). Such a build, and every binary made from it, is
// under the GPL (version 3 or later, the terms Apache-2.0 code can join); without it the project
// is Apache-2.0 and `--link` says the build has no Link.
if ProcessInfo.processInfo.environment["SAMPLER_LINK"] == "1" {
    package.targets.append(.target(
        name: "CLink", path: "Sources/CLink",
        cxxSettings: [.define("LINK_PLATFORM_LINUX", to: "1")],
        linkerSettings: [.linkedLibrary("stdc++"), .linkedLibrary("m"), .linkedLibrary("pthread")]))
    if let kit = package.targets.first(where: { $0.name == "SamplerKit" }) {
        kit.dependencies.append("CLink")
        kit.swiftSettings = (kit.swiftSettings ?? []) + [.define("SAMPLER_LINK")]
    }
}

// `make fuzz` only: libFuzzer targets (no `main`: libFuzzer brings its own), built with
// `--sanitize=fuzzer --sanitize=address` when SAMPLER_FUZZ=1.
if ProcessInfo.processInfo.environment["SAMPLER_FUZZ"] == "1" {
    package.targets.append(.executableTarget(
        name: "sampler-fuzz", dependencies: ["Patches", "SamplerCore", "SamplerKit", "Scheduling", "SoundFiles"],
        path: "Fuzz/SamplerFuzz", swiftSettings: [.unsafeFlags(["-parse-as-library"])]))
}
