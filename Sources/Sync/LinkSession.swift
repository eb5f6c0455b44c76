#if SAMPLER_LINK
import CLink
#endif
import Foundation
import SamplerCore

/// A member of an Ableton Link session: tempo, beat phase and start/stop shared with every Link
/// application on the network (Live, Bitwig, grooveboxes, phone apps, other samplers).
///
/// Link finds its peers by UDP multicast on every network interface. To keep it on one machine,
/// run every peer inside one network namespace (README: Ableton Link).
///
/// Host times are microseconds on Link's clock, which on Linux is CLOCK_MONOTONIC_RAW. JACK's
/// `jack_get_time()` (`JACKClient.hostTimeNow`) reads the same clock under JACK2 but
/// CLOCK_MONOTONIC under PipeWire, so a host time crossing between them is moved by their offset,
/// sampled each time (`linkMinusJACK`, `LinkGrid`).
///
/// Link is GPL-2.0-or-later, so it is compiled in only in a Link build (`make build LINK=1`,
/// `SAMPLER_LINK=1`); elsewhere `init` throws and `isAvailable` is false.
///
/// Control threads only (Link's "application thread" calls; none is real-time safe). Calls from
/// several threads are serialized by a lock.
// @unchecked Sendable: the Link instance is used only under `lock`; Link's own threads (discovery,
// measurement) touch only Link's internal state, which Link guards itself.
package final class LinkSession: @unchecked Sendable {
    /// Whether this build has Link.
    package static var isAvailable: Bool {
        #if SAMPLER_LINK
        true
        #else
        false
        #endif
    }

    #if SAMPLER_LINK
    private let link: OpaquePointer
    #endif
    private let lock = NSLock()

    /// Joins (or founds) the session on the local network, proposing `tempo` when alone.
    /// - Parameter startStopSync: share start and stop with peers that also do.
    package init(tempo: Double, startStopSync: Bool = true) throws {
        #if SAMPLER_LINK
        guard tempo.isFinite, tempo >= 20, tempo <= 999 else { throw SamplerError("--link: Link's tempo range is 20 to 999 bpm, got \(tempo)") }
        guard let made = sampler_link_create(tempo) else { throw SamplerError("--link: Ableton Link could not start") }
        link = made
        sampler_link_enable_start_stop_sync(link, startStopSync)
        sampler_link_enable(link, true)
        #else
        throw SamplerError("--link: this build has no Ableton Link (it is GPL; build with `make build LINK=1`, see README: Ableton Link)")
        #endif
    }

    deinit {
        #if SAMPLER_LINK
        sampler_link_enable(link, false)
        sampler_link_destroy(link)
        #endif
    }

    /// Other Link applications in the session.
    package var peerCount: Int {
        #if SAMPLER_LINK
        lock.withLock { sampler_link_peer_count(link) }
        #else
        0
        #endif
    }

    /// Link's clock now (microseconds).
    package var hostTimeNow: Int64 {
        #if SAMPLER_LINK
        lock.withLock { sampler_link_clock_micros(link) }
        #else
        0
        #endif
    }

    /// The session's timeline now, with its beat at host time `reference`, for bars of `quantum`
    /// beats.
    package func timeline(quantum: Double, reference: Int64) -> LinkTimeline {
        #if SAMPLER_LINK
        lock.withLock {
            guard let state = sampler_link_capture(link) else { return LinkTimeline(tempo: 120, quantum: quantum, referenceTime: reference, beatAtReference: 0, isPlaying: false, playingChangeTime: reference) }
            defer { sampler_link_state_destroy(state) }
            return LinkTimeline(tempo: sampler_link_state_tempo(state), quantum: quantum, referenceTime: reference,
                                beatAtReference: sampler_link_state_beat_at_time(state, reference, quantum),
                                isPlaying: sampler_link_state_is_playing(state),
                                playingChangeTime: sampler_link_state_time_for_is_playing(state))
        }
        #else
        LinkTimeline(tempo: 120, quantum: quantum, referenceTime: reference, beatAtReference: 0, isPlaying: false, playingChangeTime: reference)
        #endif
    }

    #if SAMPLER_LINK
    private func change(_ body: (OpaquePointer) -> Void) {
        lock.withLock {
            guard let state = sampler_link_capture(link) else { return }
            defer { sampler_link_state_destroy(state) }
            body(state)
            sampler_link_commit(link, state)
        }
    }
    #endif

    /// Commits a new tempo to the session from host time `time` (the beat there stays).
    package func setTempo(_ bpm: Double, atHostTime time: Int64) {
        #if SAMPLER_LINK
        let bpm = min(999, max(20, bpm))
        change { sampler_link_state_set_tempo($0, bpm, time) }
        #endif
    }

    /// Starts the session playing at host time `time`, asking for beat 0 (a bar's first beat)
    /// there; with peers, Link keeps the session's phase and moves the start to where it fits.
    /// Nothing happens when the session already plays.
    package func start(atHostTime time: Int64, quantum: Double) {
        #if SAMPLER_LINK
        change { state in
            guard !sampler_link_state_is_playing(state) else { return }
            sampler_link_state_set_is_playing_and_request_beat_at_time(state, true, time, 0, quantum)
        }
        #endif
    }

    /// Stops the session at host time `time`.
    package func stop(atHostTime time: Int64) {
        #if SAMPLER_LINK
        change { sampler_link_state_set_is_playing($0, false, time) }
        #endif
    }
}
