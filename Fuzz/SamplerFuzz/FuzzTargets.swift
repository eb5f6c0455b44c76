// sampler-fuzz: libFuzzer targets for every parser a user's input reaches. One binary; the
// target is chosen by FUZZ_TARGET (json, tempo, hydrogen, sound, midi, osc). Built only by
// `make fuzz` (SAMPLER_FUZZ=1 swift build -c release --sanitize=fuzzer --sanitize=address), which
// runs each target on its seed corpus in Fuzz/corpus/TARGET.
import DrumPlayer
import Foundation
import Hydrogen
import SFZ
import MetronomeKit
import Patches
import SamplerCore
import Scheduling
import SoundFiles
import Sync

enum FuzzTarget: String {
    case json, tempo, hydrogen, sound, midi, osc, smf, sfz
}

let target: FuzzTarget = {
    guard let name = ProcessInfo.processInfo.environment["FUZZ_TARGET"], let t = FuzzTarget(rawValue: name) else {
        FileHandle.standardError.write(Data("sampler-fuzz: set FUZZ_TARGET to json, tempo, hydrogen, sound, midi, osc, smf or sfz\n".utf8))
        exit(2)
    }
    return t
}()

/// Standard MIDI Files, and their notes turned into frames.
func fuzzSMF(_ data: Data) {
    guard let file = try? MIDIFile(bytes: [UInt8](data), file: "fuzz.mid") else { return }
    var source = MIDIFileSource(file: file, instruments: { [$0] }, sampleRate: 48000, origin: 0, loops: true)
    var n = 0
    source.produce(before: 48000 * 60) { _ in n += 1 }
}

/// SFZ text, includes of itself, and the import (no sample is on disk).
func fuzzSFZ(_ data: Data) {
    let bytes = [UInt8](data)
    guard var reader = try? SFZReader.read(bytes: bytes, file: "fuzz.sfz", directory: "/nonexistent-fuzz-dir", readInclude: { _ in bytes }) else { return }
    var sections = reader.takeSections()
    _ = try? SFZImporter.convert(&sections, files: reader.files, file: "fuzz.sfz", directory: "/nonexistent-fuzz-dir", fileExists: { _ in true })
}

/// The patch JSON parser and decoding, every format version.
func fuzzJSON(_ data: Data) {
    _ = try? PatchLoader.decode(data, file: "fuzz.json", baseDirectory: "/nonexistent-fuzz-dir")
}

/// klick tempo maps and tempo specs.
func fuzzTempo(_ data: Data) {
    let text = String(decoding: data, as: UTF8.self)
    if let map = try? TempoMap(parsing: text, file: "fuzz.map") {
        // Turning the map into frames must stay bounded too.
        var m = Metronome(timing: TempoMapTiming(map: map, sampleRate: 48000), origin: 0, barLimit: 64)
        var n = 0
        m.produce(before: 48000 * 60) { _ in n += 1 }
    }
    _ = try? TempoSpec(parsing: text)
}

/// Hydrogen drumkit.xml and song (.h2song) import, on the same bytes.
func fuzzHydrogen(_ data: Data) {
    _ = try? HydrogenKitImporter.importKit(data: data, path: "/nonexistent-fuzz-dir/drumkit.xml")
    _ = try? HydrogenSongImporter.importSong(data: data, path: "/nonexistent-fuzz-dir/song.h2song", kitDirectories: [])
}

/// Sound decoding from memory through the project's loader: the first byte picks the target
/// rate (resampling), the second a type hint.
func fuzzSound(_ data: Data) {
    guard data.count >= 2 else { return }
    let rates: [Double?] = [nil, 48000, 44100, 96000, 22050, 8000]
    let hints: [String?] = [nil, "wav", "raw", "flac", "aiff", "ogg"]
    var loader = SoundFileLoader(targetSampleRate: rates[Int(data[data.startIndex]) % rates.count])
    loader.warn = { _, _ in }
    let body = Array(data.dropFirst(2))
    _ = try? loader.load(bytes: body, name: "fuzz", typeHint: hints[Int(data[data.startIndex + 1]) % hints.count])
    // The same bytes as a file, read as a streamed sample is: its head, then its tail.
    guard (try? Data(body).write(to: URL(fileURLWithPath: soundPath))) != nil,
          let (head, frames, _) = (try? loader.loadHead(path: soundPath, frames: 65)) ?? nil, frames <= 1 << 20 else { return }
    let tail = UnsafeMutablePointer<Float>.allocate(capacity: 2 * frames)
    defer { tail.deallocate() }
    _ = try? loader.readTail(path: soundPath, frames: frames, from: 64, channelCount: head.channelCount, left: tail,
                             right: head.channelCount == 2 ? tail + frames : nil)
}

/// Where `fuzzSound` writes its input as a file (one per process).
let soundPath = FileManager.default.temporaryDirectory.appendingPathComponent("sampler-fuzz-sound-\(getpid())").path

/// MIDI bytes into the engine's note path: length-prefixed messages, rendered as they come.
let midiEngine: Engine = {
    let engine = Engine(configuration: .init(maxPlayers: 8))
    let a = try! engine.register(Sound(channels: [[1, 0.5, 0.25]], sampleRate: 48000))
    let b = try! engine.register(Sound(channels: [[0.3, 0.2], [0.1, 0.4]], sampleRate: 48000))
    engine.setInstruments([
        InstrumentDefinition(firstPlayer: 0, voiceCount: 3, chokeGroup: 1, layers: [InstrumentLayer(velocities: 1...64, sounds: [a]),
                                                                                   InstrumentLayer(velocities: 65...127, sounds: [a, b], selection: .random(seed: 7))],
                             midiNotes: [36, 37]),
        InstrumentDefinition(firstPlayer: 3, voiceCount: 5, chokeGroup: 1, layers: [InstrumentLayer(sounds: [b])], midiNotes: [38, 127]),
    ])
    return engine
}()
// libFuzzer calls the target from one thread: the render buffers and clock are that thread's.
nonisolated(unsafe) let left = UnsafeMutablePointer<Float>.allocate(capacity: 256)
nonisolated(unsafe) let right = UnsafeMutablePointer<Float>.allocate(capacity: 256)
nonisolated(unsafe) var midiFrame: Frame = 0

func fuzzMIDI(_ data: Data) {
    let bytes = Array(data)
    var i = 0
    while i < bytes.count {
        let length = Int(bytes[i] % 8)
        let end = min(bytes.count, i + 1 + length)
        let message = Array(bytes[(i + 1)..<end])
        let offset = Frame(message.first ?? 0)
        message.withUnsafeBufferPointer { m in
            if let base = m.baseAddress { midiEngine.receiveMIDI(base, count: m.count, at: midiFrame + offset) }
        }
        if bytes[i] & 0x80 != 0 {
            midiEngine.render(frameCount: 256, periodStart: midiFrame, left: left, right: right)
            midiFrame += 256
            for k in 0..<256 where !(left[k].isFinite && right[k].isFinite) { fatalError("non-finite output") }
        }
        i = end
    }
    midiEngine.drainEvents { _ in }
}

/// OSC datagrams: the bundle walker and liblo's message parser (`OSCServer.received`), then both
/// dispatchers, klick's namespace (`KlickOSC`) and the sampler's (`PatchOSC`), on offline engines
/// rendered a period per input. Files a message names are read only under the fixture's own
/// directory (`--osc-root`); replies go nowhere unless a message names a port on this machine.
final class OSCFixture {
    let directory: String
    let server: OSCServer
    let metronomeEngine = Engine(configuration: .init(maxPlayers: Metronome.playerCount))
    let patchEngine = Engine(configuration: .init(maxPlayers: 64))
    let controller: MetronomeController
    let klick: KlickOSC
    let patchOSC: PatchOSC
    let kit: Patch
    let loaded: LoadedPatch
    var frame: Frame = 0

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("sampler-fuzz-osc-\(getpid())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try WAVFileWriter.write(path: directory + "/click.wav", channels: [[1, 0.5, 0.25, 0.125]], sampleRate: 48000)
        let patch = #"{"version": 2, "tempo": 120, "instruments": [{"id": "kick", "layers": [{"samples": ["click.wav"]}]}]}"#
        try patch.write(toFile: directory + "/kit.json", atomically: true, encoding: .utf8)
        try "4 120\n8 7/8 97.3 X.x.x.x\n".write(toFile: directory + "/song.map", atomically: true, encoding: .utf8)
        kit = try PatchLoader.load(path: directory + "/kit.json")
        loaded = try LoadedPatch(kit, engine: patchEngine, sampleRate: 48000)
        server = try OSCServer(port: "0", hostNow: { 1_000_000_000 })
        var request = MetronomeRequest()
        request.tempo = "120"
        let settings = try request.makeSettings()
        controller = MetronomeController(settings: settings, transportMode: .off, serverName: nil, clientName: "", interactive: false)
        try controller.prepare(engine: metronomeEngine, sampleRate: 48000)
        controller.start(origin: 0)
        klick = KlickOSC(server: server, controller: controller, mapFile: nil, root: directory) { _ in }
        patchOSC = PatchOSC(server: server, canLoad: true, root: directory) { _ in }
    }

    func run(_ data: Data) {
        let messages = data.withUnsafeBytes { OSCServer.received($0, source: "", hostNow: { 1_000_000_000 }).messages }
        let frameAt: (UInt64) -> Frame = { Frame(min($0, 1 << 50) / 1000) * 48 }
        let now = UInt64(frame / 48) * 1000 + 1_000_000_000
        _ = klick.dispatch(messages, controller: controller, engine: metronomeEngine, frame: frame, sampleRate: 48000,
                           hostNow: now, frameAt: frameAt)
        patchOSC.dispatch(messages, kit: kit, loaded: loaded, engine: patchEngine, sampleRate: 48000, hostNow: now, frameAt: frameAt)
        patchOSC.finishLoads(kit: kit, loaded: loaded, engine: patchEngine, sampleRate: 48000)
        for engine in [metronomeEngine, patchEngine] {
            engine.render(frameCount: 256, periodStart: frame, left: left, right: right)
            for k in 0..<256 where !(left[k].isFinite && right[k].isFinite) { fatalError("non-finite output") }
            engine.drainEvents { _ in }
        }
        frame += 256
    }
}
nonisolated(unsafe) let oscFixture: OSCFixture = {
    do { return try OSCFixture() } catch { fatalError("sampler-fuzz: the OSC fixture could not be set up: \(error)") }
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: start, count: count)
    switch target {
    case .json: fuzzJSON(data)
    case .tempo: fuzzTempo(data)
    case .hydrogen: fuzzHydrogen(data)
    case .sound: fuzzSound(data)
    case .midi: fuzzMIDI(data)
    case .osc: oscFixture.run(data)
    case .smf: fuzzSMF(data)
    case .sfz: fuzzSFZ(data)
    }
    return 0
}
