import ProgramHost
import SamplerCore
import Scheduling
import SoundFiles
import Sync

/// What a metronome plays and how it sounds. Plain settings, checked by whoever fills them in
/// (the command line validates each option).
package struct MetronomeSettings {
    /// The music: sections with their meters, tempos and patterns (count-in, start label and
    /// tempo multiplier already applied).
    package var map: TempoMap
    /// Notes per beat (1 = beats only; 2, 3, 4… add softer clicks between the beats).
    package var subdivision = 1
    /// Level of the subdivision clicks relative to a normal beat.
    package var subdivisionVelocity: Float = 0.5
    /// Stop after this many bars (after the count-in); nil = at the end of the map.
    package var bars: Int?
    /// The built-in sound, used for whatever no file replaces.
    package var timbre: ClickTimbre = .click
    /// A sound file for normal beats (and for accents when `accentSoundFile` is nil).
    package var soundFile: String?
    /// A sound file for accented beats.
    package var accentSoundFile: String?
    /// Linear output level (1 = as synthesized or as in the file).
    package var volume = 1.0
    /// -1 (left) … 1 (right).
    package var pan = 0.0
    /// Whether +/− and tap may change the tempo (not for maps read from a file).
    package var allowsTempoChanges = true
    /// The tempo map file the map came from (nil: built from a tempo and meter).
    package var mapFile: String?
    /// A short description for messages ("120 bpm 4/4", "song.map").
    package var title: String
    /// Send MIDI clock (24 per quarter note, Start, Stop, song position) on a `midi_out` port,
    /// from the same timing as the clicks.
    package var midiClock = false

    /// Players the engine needs: the clicks', and one for the MIDI clock.
    package var playerCount: Int { Metronome.playerCount + (midiClock ? 1 : 0) }

    package init(map: TempoMap, title: String) {
        self.map = map
        self.title = title
    }
}

/// A metronome's sounds loaded (or synthesized) at one rate and registered with an engine, and
/// its three players (accent, normal, subdivision) turned into start commands.
///
/// Control thread only.
package struct MetronomeInstrument {
    private let sounds: [SoundID]
    private let levels: [Float]
    private let pan: PanGains

    /// Loads the sounds at `sampleRate` and registers them with `engine`. Errors name the option
    /// and the file ("--sound: /x.wav: no such file").
    package init(settings: MetronomeSettings, sampleRate: Double, engine: Engine) throws {
        let (accent, normal) = try MetronomeInstrument.loadSounds(settings, sampleRate: sampleRate)
        let accentID = try engine.register(accent), normalID = try engine.register(normal)
        sounds = [accentID, normalID, normalID]
        // One file for both: accents stand out by level.
        let normalLevel: Float = settings.soundFile != nil && settings.accentSoundFile == nil ? Float(ClickSounds.normalLevel) : 1
        let v = Float(settings.volume)
        levels = [v, v * normalLevel, v * normalLevel]
        pan = PanGains(pan: Float(settings.pan))
    }

    /// The accent and normal sounds at `sampleRate`.
    static func loadSounds(_ settings: MetronomeSettings, sampleRate: Double) throws -> (accent: Sound, normal: Sound) {
        let loader = SoundFileLoader(targetSampleRate: sampleRate)
        func load(_ path: String, _ option: String) throws -> Sound {
            do { return try loader.load(path: path) } catch { throw SamplerError("\(option): \(error)") }
        }
        let normal = try settings.soundFile.map { try load($0, "--sound") }
            ?? ClickSounds.sound(settings.timbre, accent: false, sampleRate: sampleRate)
        let accent = try settings.accentSoundFile.map { try load($0, "--accent-sound") }
            ?? normal.unlessBuiltIn(settings.soundFile)
            ?? ClickSounds.sound(settings.timbre, accent: true, sampleRate: sampleRate)
        return (accent, normal)
    }

    /// Reads the sound files once at their own rate, so that a bad file is reported before any
    /// JACK client opens.
    package static func checkSoundFiles(_ settings: MetronomeSettings) throws {
        let loader = SoundFileLoader()
        for (path, option) in [(settings.soundFile, "--sound"), (settings.accentSoundFile, "--accent-sound")] {
            guard let path else { continue }
            do { _ = try loader.load(path: path) } catch { throw SamplerError("\(option): \(error)") }
        }
    }

    /// The command that plays `trigger`'s click on its frame, or sends its MIDI clock message.
    package func command(for trigger: Trigger) -> Command {
        if trigger.player == Metronome.clockPlayer, let message = MIDIClockMessage(velocity: trigger.velocity) {
            return .midi(message.bytes, player: Metronome.clockPlayer, at: trigger.frame)
        }
        return .start(player: trigger.player, sound: sounds[trigger.player], at: trigger.frame,
                      gain: Gain(linear: levels[trigger.player] * trigger.velocity), pan: pan)
    }
}

private extension Sound {
    /// Self when it came from a file (`path` non-nil): the file then serves accents too.
    func unlessBuiltIn(_ path: String?) -> Sound? { path == nil ? nil : self }
}
