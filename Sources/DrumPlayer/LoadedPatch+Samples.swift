import Foundation
import Patches
import SamplerCore
import SoundFiles

// A kit's samples as an instrument plays them: which stream from disk, and the sounds made of
// the others (trimmed, delayed, looped), with their envelopes and their places in the patch.

extension LoadedPatch {
    /// The file instrument `i` streams, or nil when it is decoded into memory.
    static func streamFile(of instrument: DrumInstrument, at i: Int, in kit: Patch,
                                   options: PatchStreamingOptions) throws -> StreamFile? {
        guard instrument.layers.count == 1, instrument.layers[0].samples.count == 1 else { return nil }
        let sample = instrument.layers[0].samples[0]
        switch sample.loading {
        case .preload:
            return nil
        case .automatic:
            // A tuned sample is resampled when decoded; streaming plays it untuned, and whole.
            guard let threshold = options.threshold, instrument.tune == 0, instrument.delay == 0, instrument.randomDelay == 0, !sample.isTrimmed else { return nil }
            let file = try open(sample, place(kit, i, 0, 0))
            return file.duration > threshold ? file : nil
        case .stream:
            guard instrument.tune == 0 else {
                throw SamplerError("\(place(kit, i, 0, 0)): a streamed sample cannot be tuned (\"tune\": \(instrument.tune))")
            }
            guard instrument.delay == 0, instrument.randomDelay == 0 else {
                throw SamplerError("\(place(kit, i, 0, 0)): a streamed sample cannot be delayed (\"delay\": \(instrument.delay), \"random\": {\"delay\": \(instrument.randomDelay)})")
            }
            return try open(sample, place(kit, i, 0, 0))
        }
    }

    /// `e` in frames at `sampleRate`.
    static func envelope(_ e: Envelope, sampleRate: Double) -> AmplitudeEnvelope {
        func frames(_ seconds: Double) -> Int { Int((seconds * sampleRate).rounded()) }
        var envelope = AmplitudeEnvelope(attackFrames: frames(e.attack), holdFrames: frames(e.hold), decayFrames: frames(e.decay),
                                         sustain: Float(e.sustain), releaseFrames: frames(e.release), followsNoteOff: e.noteOff,
                                         chokeReleaseFrames: e.choke.map(frames), delayFrames: frames(e.delay), start: Float(e.start))
        if let v = e.velocity {
            envelope.velocity = EnvelopeVelocity(delayFrames: frames(v.delay), attackFrames: frames(v.attack), holdFrames: frames(v.hold),
                                                 decayFrames: frames(v.decay), sustain: Float(v.sustain), releaseFrames: frames(v.release))
        }
        return envelope
    }

    /// An instrument's `delay` in frames at `sampleRate`.
    static func delayFrames(_ instrument: DrumInstrument, sampleRate: Double) -> Int {
        Int(((instrument.delay + instrument.randomDelay) * sampleRate).rounded())
    }

    /// `sound` after `frames` of silence (its loop start moved with it): a delayed instrument's
    /// sample (SFZ's `delay`), so that a voice starts on its trigger's frame and sounds after the delay.
    static func delayed(_ sound: Sound, by frames: Int) throws -> Sound {
        let channels = (0..<sound.channelCount).map { [Float](repeating: 0, count: frames) + sound.samples(channel: $0) }
        let whole = try Sound(channels: channels, sampleRate: sound.sampleRate, memory: HugePageSampleMemory.shared)
        return Sound(slicing: whole, from: 0, count: whole.frameCount, loopStart: sound.loopStart + frames)
    }

    /// `sound` (the file's frames `offset …` at `nativeFrames` of the file, resampled and tuned)
    /// ending at `loop`'s last frame, its loop start at the loop's first, both in the sound's
    /// frames (scaled as the resampling scaled the file's).
    static func looped(_ sound: Sound, loop: ClosedRange<Int>, offset: Int, nativeFrames: Int) -> Sound {
        let placed = loopPlace((loop.lowerBound - offset)...(loop.upperBound - offset), fileFrames: sound.frameCount, nativeFrames: nativeFrames)
        return Sound(slicing: sound, from: 0, count: placed.end, loopStart: placed.start)
    }

    /// Frames `sample.offset … sample.end` of the file (at its own rate; backwards when it
    /// says so), then at `sampleRate`, and how many frames of the file they are.
    static func trimmed(_ sample: SampleFile, sampleRate: Double, root: String? = nil) throws -> (Sound, Int) {
        let native: Sound
        if let data = sample.data {
            native = try SoundFileLoader(targetSampleRate: nil).load(bytes: data, name: sample.path)
        } else {
            native = try SoundFileLoader(targetSampleRate: nil).load(path: sample.resolvedPath, root: root)
        }
        let start = min(sample.offset, native.frameCount)
        let stop = min((sample.end ?? (native.frameCount - 1)) + 1, native.frameCount)
        guard start < stop else {
            throw SamplerError("the offset (\(sample.offset)) is at or past the file's end (\(native.frameCount) frames)")
        }
        var channels = (0..<native.channelCount).map { Array(native.samples(channel: $0)[start..<stop]) }
        if sample.reverse { channels = channels.map { $0.reversed() } }
        if native.sampleRate != sampleRate {
            channels = try Resampler.resample(channels, from: native.sampleRate, to: sampleRate)
        }
        return (try Sound(channels: channels, sampleRate: sampleRate, memory: HugePageSampleMemory.shared), stop - start)
    }

    private static func open(_ sample: SampleFile, _ place: String) throws -> StreamFile {
        do { return try StreamFile(path: sample.resolvedPath) } catch { throw SamplerError("\(place): \(error)") }
    }

    /// Where a sample is named in the patch, for errors: where the file says it (`sounds.kick`
    /// in a version 1 patch), else its place in the model.
    package static func place(_ kit: Patch, _ i: Int, _ l: Int, _ s: Int) -> String {
        "\(kit.file): " + (kit.instruments[i].layers[l].samples[s].place ?? "instruments[\(i)].layers[\(l)].samples[\(s)]")
    }
}
