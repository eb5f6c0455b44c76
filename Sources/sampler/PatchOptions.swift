import ArgumentParser
import DrumPlayer
import Foundation
import ProgramHost
import Patches
import SFZ
import SamplerCore
import Scheduling

/// Options shared by the commands that read a patch.
struct PatchOptions: ParsableArguments {
    @Option(name: .long, help: "The patch file to play: JSON (version 1 or 2) or an SFZ instrument (.sfz).")
    var patch: String = "Patches/drums.json"

    @Option(name: .long, help: "Tempo in quarter notes per minute, overriding the patch's (1 ≤ tempo ≤ 1000).")
    var tempo: Double?

    @Option(name: .long, help: "Play this pattern (default: the patch's song, or its first pattern; a version 1 patch's is named \"pattern\").")
    var pattern: String?

    @Flag(name: .long, help: "Play the patch's song.")
    var song = false

    @Flag(inversion: .prefixedNo, help: "Loop the song, pattern or MIDI file, or stop at its end (default: a song as the patch says, a pattern loops, a MIDI file plays once).")
    var loop: Bool?

    @Option(name: .long, help: "Play this Standard MIDI File (type 0 or 1) through the patch: each note plays the instruments with its MIDI note, on the file's tempo map (--tempo scales it so that its first tempo is the one given).")
    var midi: String?

    @Option(name: .long, help: "When the patch's samples, decoded, come to more than this many MB, long samples keep only their first frames in memory (--stream-head-frames) and the rest is read from disk for each voice that plays it (0: always; default 512).")
    var streamTailsAbove: Double = 512

    @Option(name: .long, help: "Frames of each long sample kept in memory when tails stream (--stream-tails-above), 64 to 1048576 (default: the patch's \"headFrames\", else 8192).")
    var streamHeadFrames: Int?

    @Option(name: .long, help: "Voices that can play samples streamed from disk at once (--stream-tails-above); a note beyond them is not played, and counted (default 64).")
    var streamVoices: Int = 64

    @Option(name: .long, help: "Frames of the ring buffer each of those voices reads its sample's tail through, 4096 to 16777216: the disk reads at most this far ahead of a voice (default: 2.5 s at the server's rate).")
    var streamRingFrames: Int?

    func validate() throws {
        if !(streamTailsAbove >= 0 && streamTailsAbove <= 1_000_000) {
            throw ValidationError("--stream-tails-above must be a number of MB from 0 to 1000000, got \(streamTailsAbove)")
        }
        if let streamHeadFrames, !(64...1_048_576).contains(streamHeadFrames) {
            throw ValidationError("--stream-head-frames must be from 64 to 1048576, got \(streamHeadFrames)")
        }
        if !(1...4096).contains(streamVoices) { throw ValidationError("--stream-voices must be from 1 to 4096, got \(streamVoices)") }
        if let streamRingFrames, !(4096...16_777_216).contains(streamRingFrames) {
            throw ValidationError("--stream-ring-frames must be from 4096 to 16777216, got \(streamRingFrames)")
        }
        if let tempo, !(tempo >= 1 && tempo <= 1000) {
            throw ValidationError("--tempo must be a number between 1 and 1000, got \(tempo)")
        }
        if pattern != nil && song { throw ValidationError("--pattern and --song cannot be used together") }
        if midi != nil && (pattern != nil || song) { throw ValidationError("--midi plays the MIDI file: it cannot be used with --pattern or --song") }
    }

    func makeProgram(oscPort: String? = nil, oscHost: String = "127.0.0.1", oscRoot: String? = nil, link: Bool = false) throws -> any LiveProgram {
        let selection: PatchSelection = song ? .song : pattern.map { .pattern($0) } ?? .automatic
        let kit: Patch
        if patch.lowercased().hasSuffix(".sfz") {
            let imported = try SFZImporter.importSFZ(path: patch)
            for note in imported.notes { warn("note: \(note)") }
            kit = imported.kit
        } else {
            do { kit = try PatchLoader.load(path: patch) } catch { throw SamplerError("\(error)") }
        }
        var playback: MIDIPlayback?
        if let midi {
            playback = MIDIPlayback(file: try MIDIFile.load(path: midi), tempo: tempo, loops: loop ?? false)
            // A pass shorter than a period would be walked many times a period, to no end.
            let pass = playback!.file.duration / (tempo.map { $0 / playback!.file.initialTempo } ?? 1)
            if loop == true, pass < MIDIPlayback.shortestLoop {
                throw SamplerError("\(midi): --loop: the file lasts \(formatNumber((pass * 10_000).rounded() / 10)) ms\(tempo == nil ? "" : " at --tempo \(formatNumber(tempo!))"); a looped file lasts at least \(formatNumber(MIDIPlayback.shortestLoop * 1000)) ms")
            }
            let unplayed = playback!.unplayedNotes(in: kit)
            if !unplayed.isEmpty {
                warn("warning: \(midi): no instrument of \(patch) plays MIDI note\(unplayed.count == 1 ? "" : "s") \(unplayed.map(String.init).joined(separator: ", "))")
            }
        }
        var streaming = PatchStreamingOptions()
        streaming.tailsAboveBytes = Int(streamTailsAbove * 1_000_000)
        streaming.tailVoices = streamVoices
        streaming.headFrames = streamHeadFrames
        streaming.tailRingFrames = streamRingFrames
        return try PatchProgram(kit: kit, selection: selection, loop: loop, tempo: playback == nil ? tempo : nil, streaming: streaming,
                                oscPort: oscPort, oscHost: oscHost,
                                oscRoot: oscRoot, link: link, midi: playback)
    }

    private func warn(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
