import CJACK
import Synchronization
import SamplerCore

extension JACKClient {
    /// JACK's clock now, in microseconds (`jack_get_time`): the host time of this backend.
    package var hostTimeNow: UInt64 { jack_get_time() }

    /// The device frame at host time `microseconds` (JACK's `jack_time_to_frames`, widened to
    /// 64 bits around the current period).
    package func frame(atHostTime microseconds: UInt64) -> Frame {
        guard let client = handle else { return 0 }
        return widen(jack_time_to_frames(client, microseconds))
    }

    /// The host time (microseconds on JACK's clock) of device frame `frame`
    /// (`jack_frames_to_time`).
    package func hostTime(atFrame frame: Frame) -> UInt64 {
        guard let client = handle else { return 0 }
        return jack_frames_to_time(client, UInt32(truncatingIfNeeded: frame - clockAdvance))
    }

    /// The frame at which the server's latest cycle began (`jack_last_frame_time`: JACK2 keeps it in
    /// the server's shared state, so it advances with the server's cycles whether or not this
    /// client's callback runs). 32 bits, wrapping. Any thread; 0 once closed.
    package var serverCycleFrame: UInt32 { handle.map { jack_last_frame_time($0) } ?? 0 }

    /// Widens a 32-bit JACK frame time to the 64-bit device clock, taking the value nearest the
    /// last rendered period.
    func widen(_ raw: UInt32) -> Frame {
        let raw = raw &+ UInt32(truncatingIfNeeded: clockAdvance)
        if engine.periodCount == 0 { return Frame(raw) }
        let last = engine.lastPeriodStart
        return last + Frame(Int32(bitPattern: raw &- UInt32(truncatingIfNeeded: last)))
    }

    /// Frames the device clock is ahead of JACK's frame time (`advanceClock`).
    package var clockAdvance: Frame { engine.clockAdvance.load(ordering: .relaxed) }

    /// Moves the device clock `frames` ahead of JACK's frame time from the next period on: the
    /// engine sees them as lost frames (a silent gap), as it sees a cycle JACK skipped. For a
    /// netjack2 slave whose server restarted (`takeUncountedFrames`).
    package func advanceClock(by frames: Frame) {
        engine.clockAdvance.add(frames, ordering: .relaxed)
    }

    /// The frames of the cycles the host clock saw pass that JACK's frame time did not count,
    /// since the last call (`CycleGaps`): a netjack2 slave's missed cycles when its server
    /// stopped and its net driver restarted. Any thread.
    package func takeUncountedFrames() -> Frame {
        context.uncountedFrames.exchange(0, ordering: .relaxed)
    }
}

extension JACKClient {
    /// JACK's clock now, in microseconds (`jack_get_time`), for threads without a client at hand.
    /// Valid once a client has been opened in this process (JACK picks its clock source then).
    package static var hostClockNow: UInt64 { jack_get_time() }
}
