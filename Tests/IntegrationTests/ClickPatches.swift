import Foundation
import JACKTestSupport
import SoundFiles

// The click patches and kits the command-line and live suites play.

/// Makes a directory with a short-click WAV and a one-player patch that clicks every beat.
func clickPatch(bpm: Double) throws -> URL {
    let dir = try temporaryDirectory()
    try WAVFileWriter.write(path: dir.appendingPathComponent("click.wav").path,
                            channels: [[1, 0.5, 0.25, 0.125, 0.0625, 0.03]], sampleRate: 48000)
    let patch = dir.appendingPathComponent("click.json")
    try """
    {"version": 1, "tempo": \(bpm), "sounds": {"click": "click.wav"},
     "players": [{"id": "c", "sound": "click", "pan": -1}],
     "pattern": {"stepsPerBeat": 1, "steps": [["c"]]}}
    """.write(to: patch, atomically: true, encoding: .utf8)
    return patch
}

/// A directory with a short click and a version 2 kit: "kick" (General MIDI note 36, left) and
/// "snare" (note 50, right), and one pattern `kick` of 8 sixteenths at `bpm`, `swing` %.
func clickKit(bpm: Double, swing: Double, kickSteps: [Int]) throws -> URL {
    let dir = try temporaryDirectory()
    try WAVFileWriter.write(path: dir.appendingPathComponent("click.wav").path,
                            channels: [[1, 0.5, 0.25, 0.125, 0.0625, 0.03]], sampleRate: 48000)
    let kit = dir.appendingPathComponent("kit.json")
    try """
    {"version": 2, "tempo": \(bpm),
     "instruments": [{"id": "kick", "layers": [{"samples": ["click.wav"]}], "pan": -1},
                     {"id": "snare", "layers": [{"samples": ["click.wav"]}], "pan": 1, "midiNote": 50}],
     "patterns": [{"name": "beat", "beatsPerBar": 2, "stepsPerBeat": 4, "swing": \(swing),
                   "tracks": {"kick": \(kickSteps)}}]}
    """.write(to: kit, atomically: true, encoding: .utf8)
    return kit
}
