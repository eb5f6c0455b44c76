import JACKBackend
import SamplerCore

/// A Link session's timeline on a JACK client's device frames: the frame at which each Link beat
/// leaves the output port (its host time through JACK's frame/time estimate, less the port's
/// playback latency). Taken at one moment; control thread only.
package struct LinkGrid {
    package let timeline: LinkTimeline
    /// The frame rendered next when the grid was taken; `timeline.referenceTime` is the host
    /// time at which it leaves the port.
    package let referenceFrame: Frame
    package let sampleRate: Double

    package var framesPerBeat: Double { 60 * sampleRate / timeline.tempo }

    /// The (fractional) frame leaving the port at host time `microseconds`.
    package func frame(atHostTime microseconds: Int64) -> Double {
        Double(referenceFrame) + Double(microseconds - timeline.referenceTime) * sampleRate / 1e6
    }

    package func beat(atFrame frame: Frame) -> Double {
        timeline.beatAtReference + Double(frame - referenceFrame) / framesPerBeat
    }

    /// The (fractional) frame of `beat`.
    package func frame(atBeat beat: Double) -> Double {
        Double(referenceFrame) + (beat - timeline.beatAtReference) * framesPerBeat
    }
}

extension LinkSession {
    /// Link's clock minus JACK's, sampled now (`ClockOffset`): JACK's clock is Link's
    /// (CLOCK_MONOTONIC_RAW) under JACK2, CLOCK_MONOTONIC under PipeWire, which NTP slews apart.
    package func linkMinusJACK() -> Int64 {
        ClockOffset.sample(source: { Int64(JACKClient.hostClockNow) }, target: { self.hostTimeNow })
    }

    /// The frame rendered next and the time on Link's clock at which it leaves `client`'s output
    /// port (JACK's estimate of the frame's time, moved to Link's clock by `linkMinusJACK`).
    package func reference(client: JACKClient, sampleRate: Double) -> (frame: Frame, time: Int64) {
        let frame = client.engine.renderedFrame
        let latency = Double(client.playbackLatency.max) * 1e6 / sampleRate
        return (frame, Int64(client.hostTime(atFrame: frame)) + Int64(latency.rounded()) + linkMinusJACK())
    }

    /// The session's timeline now, on `client`'s frames, for bars of `quantum` beats.
    package func grid(client: JACKClient, sampleRate: Double, quantum: Double) -> LinkGrid {
        let ref = reference(client: client, sampleRate: sampleRate)
        return LinkGrid(timeline: timeline(quantum: quantum, reference: ref.time), referenceFrame: ref.frame, sampleRate: sampleRate)
    }

    /// The time on Link's clock at which device frame `frame` leaves `client`'s output port.
    package func hostTime(ofFrame frame: Frame, client: JACKClient, sampleRate: Double) -> Int64 {
        let ref = reference(client: client, sampleRate: sampleRate)
        return ref.time + Int64((Double(frame - ref.frame) * 1e6 / sampleRate).rounded())
    }

    /// A change of the grid smaller than this (0.25 ms) is JACK's time estimate jittering, not the
    /// session moving: the clicks and notes keep their grid.
    package static func tolerance(sampleRate: Double) -> Double { max(2, 0.00025 * sampleRate) }

    /// The first frame a change can still reach: two periods after the last one rendered.
    package static func earliestFrame(client: JACKClient) -> Frame {
        client.engine.renderedFrame + 2 * Frame(max(1, client.bufferSize))
    }
}
