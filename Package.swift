// swift-tools-version: 6.1
import Foundation
import PackageDescription

// Dependencies point one way (docs/architecture.md has the picture; `make docs` redraws it):
//   sampler (CLI) → DrumPlayer, MetronomeKit, Hydrogen, SFZ, NSM, ProgramHost, Patches, Scheduling, SamplerCore
//   DrumPlayer, MetronomeKit → ProgramHost, Sync → JACKBackend, SoundFiles, Patches, Scheduling → SamplerCore
//   Hydrogen, SFZ → Patches, SafeFiles; NSM → Sync, SafeFiles
//   SamplerKit (the AVAudioPlayer-style API) → JACKBackend, SoundFiles → SamplerCore; its SamplerNode (a kit
//   played by MIDI) → DrumPlayer, SFZ, Patches
// The command line does not use SamplerKit: that library is for other programs (its example,
// sampler-soak and the benchmarks use it). It names SamplerCore for the one error type every
// module throws (SamplerError).
// What crosses between these modules and is not a library's API uses `package` access.
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
        .systemLibrary(name: "CSoxr", path: "Sources/CSoxr", pkgConfig: "soxr"),

        // Pure Swift engine: everything the real-time thread runs.
        // The lock-free ring, in a module of its own so that its @inlinable generic code is
        // specialized and checked inside the @_noLocks render path that uses it.
        .target(name: "LockFree"),
        // A pthread-mutex box for state shared with JACK's and the control threads (visible to
        // ThreadSanitizer, which Synchronization.Mutex is not on Linux).
        .target(name: "Locking"),
        // A prefetch hint for the render loop (a static inline C function around __builtin_prefetch).
        .target(name: "CPrefetch"),
        // Mixing kernels in C for instructions Swift cannot name (AVX-512 permutes and gathers),
        // each with its own target attribute, called only where the CPU has them.
        .target(name: "CMixKernels"),
        .target(name: "SamplerCore", dependencies: ["LockFree", "CPrefetch", "CMixKernels",
                                                    .product(name: "RealModule", package: "swift-numerics")]),
        .target(name: "SoundFiles", dependencies: ["SamplerCore", "SafeFiles", "Locking", "CSndFile", "CSampleRate", "CSoxr"]),
        // Reading files a user, a message or a patch names: regular files only, with a size limit.
        .target(name: "SafeFiles"),
        .target(name: "Patches", dependencies: ["SamplerCore", "SafeFiles"]),
        .target(name: "Scheduling", dependencies: ["SamplerCore", "SafeFiles"]),
        .target(name: "JACKBackend", dependencies: ["SamplerCore", "LockFree", "Locking", "CJACK"]),
        // liblo (Debian liblo-dev), for OSC over UDP.
        .systemLibrary(name: "CLiblo", path: "Sources/CLiblo", pkgConfig: "liblo", providers: [.apt(["liblo-dev"])]),

        // The AVAudioPlayer-style API: session, players, node, files, buffers, devices.
        .target(name: "SamplerKit", dependencies: ["SamplerCore", "SoundFiles", "JACKBackend", "Locking", "DrumPlayer", "Patches", "SFZ"]),

        // Sync plumbing both programs share: the OSC server and timetags, the Link session and grid.
        .target(name: "Sync", dependencies: ["SamplerCore", "JACKBackend", "CLiblo", "Locking"]),
        // The host both programs run in: live on JACK (LivePlayback) and offline (OfflineRenderer).
        .target(name: "ProgramHost", dependencies: ["SamplerCore", "SoundFiles", "Patches", "Scheduling", "JACKBackend"]),
        // The drum/patch player: loaded patches, patterns and songs, MIDI in, patch OSC and Link.
        .target(name: "DrumPlayer", dependencies: [
            "ProgramHost", "Sync", "SamplerCore", "SoundFiles", "Patches", "Scheduling", "JACKBackend", "SafeFiles", "Locking", "SFZ",
        ]),
        // The metronome: controller, keys, klick's OSC, Link, MIDI clock.
        .target(name: "MetronomeKit", dependencies: ["ProgramHost", "Sync", "SamplerCore", "SoundFiles", "Scheduling", "JACKBackend"]),
        // Hydrogen import: drumkit.xml and .h2song in, the patch model out.
        .target(name: "Hydrogen", dependencies: ["Patches", "SamplerCore", "SafeFiles"]),
        // SFZ import: .sfz text (with #define and #include) in, the patch model out.
        .target(name: "SFZ", dependencies: ["Patches", "SamplerCore", "SafeFiles", "SoundFiles"]),

        // New Session Manager (NSM API 1.1) clients: the protocol over OSC and the state document
        // a command keeps in a session.
        .target(name: "NSM", dependencies: ["Sync", "SafeFiles"]),

        // The command line: thin commands over the product modules.
        .executableTarget(name: "sampler", dependencies: [
            "DrumPlayer", "MetronomeKit", "Hydrogen", "SFZ", "Patches", "Scheduling", "ProgramHost", "NSM", "SamplerCore",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // A program that imports only SamplerKit: proves the public API is enough to load files,
        // build buffers, play, stop and feed a PlayerNode.
        .executableTarget(name: "samplerkit-example", dependencies: ["SamplerKit"], path: "Examples/SamplerKitOnly"),

        // Test instruments (Tools/). The JACK clients share ToolSupport (opening a client, connecting,
        // waiting for a signal) and nothing of the engine: they are the independent witnesses.
        .target(name: "ToolSupport", dependencies: ["CJACK"], path: "Tools/ToolSupport"),
        // Records ports with their device-clock frames: what really left the engine's ports.
        .executableTarget(name: "sampler-capture", dependencies: ["CJACK", "ToolSupport"], path: "Tools/SamplerCapture"),
        .executableTarget(name: "sampler-midi-send", dependencies: ["CJACK", "ToolSupport"], path: "Tools/SamplerMIDISend"),
        // Records MIDI events with their device-clock frames (the MIDI clock tests).
        .executableTarget(name: "sampler-midi-capture", dependencies: ["CJACK", "ToolSupport"], path: "Tools/SamplerMIDICapture"),
        // Fault injection: a client upstream of the sampler that sleeps inside its cycle on demand.
        .executableTarget(name: "sampler-disturb", dependencies: ["CJACK", "ToolSupport"], path: "Tools/SamplerDisturb"),
        // An independent OSC client (liblo only) for the tests of the OSC interfaces.
        .executableTarget(name: "sampler-osc-send", dependencies: ["CLiblo"], path: "Tools/SamplerOSCSend"),
        // `make soak`: the randomized control side of a long live run.
        .executableTarget(name: "sampler-soak", dependencies: ["SamplerKit"], path: "Tools/SamplerSoak"),

        // `make bench`: a release-built benchmark executable, and the same mixing job as a plain C
        // loop for reference.
        .executableTarget(name: "sampler-bench", dependencies: [
            "SamplerCore", "SamplerKit", "ProgramHost", "DrumPlayer", "MetronomeKit", "SoundFiles", "Scheduling", "CMixReference",
            .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
        ], path: "Benchmarks/SamplerBench"),
        .target(name: "CMixReference", path: "Benchmarks/CMixReference",
                cSettings: [.unsafeFlags(["-O3", "-march=native", "-ffp-contract=off"])]),
        // `scripts/stream-bench.sh`: memory and CPU of 1, 4 and 16 streamed files on a dummy server.
        .executableTarget(name: "sampler-stream-bench", dependencies: ["SamplerKit", "ProgramHost", "DrumPlayer", "SoundFiles"], path: "Benchmarks/StreamBench"),

        .testTarget(name: "LockFreeTests", dependencies: ["LockFree"]),
        .testTarget(name: "SamplerCoreTests", dependencies: ["SamplerCore"]),
        .testTarget(name: "SoundFilesTests", dependencies: ["SoundFiles", "Locking", "CSoxr"]),
        .testTarget(name: "PatchesTests", dependencies: ["Patches"]),
        .testTarget(name: "SchedulingTests", dependencies: ["Scheduling"]),
        .testTarget(name: "SFZTests", dependencies: ["SFZ", "Patches", "SamplerCore"]),
        // The Hydrogen importer through `sampler import-hydrogen` (the binary, no JACK server), and
        // every demo song against h2cli's own export (run by the live stage: scripts/live-tests.sh).
        .testTarget(name: "HydrogenTests", dependencies: ["Hydrogen", "SamplerCore", "SoundFiles", "JACKTestSupport"]),
        .testTarget(name: "SafeFilesTests", dependencies: ["SafeFiles"]),
        .testTarget(name: "SyncTests", dependencies: ["Sync", "SamplerCore"]),
        .testTarget(name: "NSMTests", dependencies: ["NSM", "Sync"]),
        .testTarget(name: "JACKBackendTests", dependencies: ["JACKBackend", "Locking"]),
        .testTarget(name: "SamplerKitTests", dependencies: ["SamplerKit", "JACKTestSupport", "Locking"]),
        .testTarget(name: "DrumPlayerTests", dependencies: ["DrumPlayer", "ProgramHost", "Patches", "Scheduling", "SoundFiles", "JACKTestSupport", "Locking"]),
        .testTarget(name: "MetronomeKitTests", dependencies: [
            "MetronomeKit", "ProgramHost", "Sync", "Scheduling", "SoundFiles", "JACKBackend", "JACKTestSupport",
        ]),
        // Shared by the test targets that need a real JACK server and an external capture.
        .target(name: "JACKTestSupport", dependencies: ["SamplerCore", "Locking"], path: "Tests/JACKTestSupport"),
        .testTarget(name: "AllocationTests", dependencies: [
            "SamplerCore", "JACKBackend", "SamplerKit", "ProgramHost", "DrumPlayer", "MetronomeKit", "JACKTestSupport",
            .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
        ]),
        .testTarget(name: "IntegrationTests", dependencies: [
            "SamplerKit", "ProgramHost", "DrumPlayer", "MetronomeKit", "Sync", "JACKBackend", "JACKTestSupport", "Locking", "SoundFiles",
        ]),
    ],
    swiftLanguageModes: [.v6],
    cxxLanguageStandard: .cxx17
)

// Ableton Link is GPL-2.0-or-later: it is compiled in only when SAMPLER_LINK=1 (`make
// build LINK=1`; `make test` always builds it). Such a build, and every binary made from it, is
// under the GPL (version 3 or later, the terms Apache-2.0 code can join); without it the project
// is Apache-2.0 and `--link` says the build has no Link.
if ProcessInfo.processInfo.environment["SAMPLER_LINK"] == "1" {
    package.targets.append(.target(
        name: "CLink", path: "Sources/CLink",
        cxxSettings: [.define("LINK_PLATFORM_LINUX", to: "1")],
        linkerSettings: [.linkedLibrary("stdc++"), .linkedLibrary("m"), .linkedLibrary("pthread")]))
    if let sync = package.targets.first(where: { $0.name == "Sync" }) {
        sync.dependencies.append("CLink")
        sync.swiftSettings = (sync.swiftSettings ?? []) + [.define("SAMPLER_LINK")]
    }
}

// `make fuzz` only: libFuzzer targets (no `main`: libFuzzer brings its own), built with
// `--sanitize=fuzzer --sanitize=address` when SAMPLER_FUZZ=1.
if ProcessInfo.processInfo.environment["SAMPLER_FUZZ"] == "1" {
    package.targets.append(.executableTarget(
        name: "sampler-fuzz", dependencies: [
            "Patches", "SamplerCore", "Hydrogen", "SFZ", "ProgramHost", "Scheduling", "SoundFiles", "Sync", "MetronomeKit", "DrumPlayer",
        ],
        path: "Fuzz/SamplerFuzz", swiftSettings: [.unsafeFlags(["-parse-as-library"])]))
}
