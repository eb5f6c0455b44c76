import Foundation
import SoundFiles

/// A patch in `dir` with one instrument, a short decaying kick, played on every beat of a 4/4
/// bar by its one pattern ("four": the first beat at velocity 127, the others at 100) at
/// `tempo`. Returns its path.
func kickOnEveryBeat(in dir: URL, tempo: Int) throws -> URL {
    try WAVFileWriter.write(path: dir.appendingPathComponent("kick.wav").path,
                            channels: [[1, 0.5, 0.25, 0.125, 0.0625, 0.03]], sampleRate: 48000)
    let patch = dir.appendingPathComponent("kick.json")
    try """
    {"version": 2, "tempo": \(tempo), "instruments": [{"id": "kick", "layers": [{"samples": ["kick.wav"]}]}],
     "patterns": [{"name": "four", "beatsPerBar": 4, "stepsPerBeat": 1, "bars": 1,
                   "tracks": {"kick": {"steps": [127, 100, 100, 100]}}}]}
    """.write(to: patch, atomically: true, encoding: .utf8)
    return patch
}
