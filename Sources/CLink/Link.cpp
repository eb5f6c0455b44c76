// The C shim over Ableton Link (see include/CLink.h). Compiled only in a Link build
// (SAMPLER_LINK=1), whose binaries are then under the GPL (Link is GPL-2.0-or-later).
#include "CLink.h"

#include <ableton/Link.hpp>

#include <chrono>

struct sampler_link {
    ableton::Link link;
    explicit sampler_link(double bpm) : link(bpm) {}
};

struct sampler_link_state {
    ableton::Link::SessionState state;
};

using std::chrono::microseconds;

extern "C" {

sampler_link *sampler_link_create(double bpm) {
    try {
        return new sampler_link(bpm);
    } catch (...) {
        return nullptr;
    }
}

// No C++ exception may cross into Swift: each call that can throw (allocation, Link's network
// set-up) catches and does nothing, or returns NULL.
void sampler_link_destroy(sampler_link *link) {
    try {
        delete link;
    } catch (...) {
    }
}

void sampler_link_enable(sampler_link *link, bool enabled) {
    try {
        link->link.enable(enabled);
    } catch (...) {
    }
}
bool sampler_link_is_enabled(const sampler_link *link) { return link->link.isEnabled(); }
void sampler_link_enable_start_stop_sync(sampler_link *link, bool enabled) { link->link.enableStartStopSync(enabled); }
size_t sampler_link_peer_count(const sampler_link *link) { return link->link.numPeers(); }
int64_t sampler_link_clock_micros(const sampler_link *link) { return link->link.clock().micros().count(); }

sampler_link_state *sampler_link_capture(const sampler_link *link) {
    try {
        return new sampler_link_state{link->link.captureAppSessionState()};
    } catch (...) {
        return nullptr;
    }
}

void sampler_link_commit(sampler_link *link, const sampler_link_state *state) {
    try {
        link->link.commitAppSessionState(state->state);
    } catch (...) {
    }
}

void sampler_link_state_destroy(sampler_link_state *state) { delete state; }

double sampler_link_state_tempo(const sampler_link_state *s) { return s->state.tempo(); }
double sampler_link_state_beat_at_time(const sampler_link_state *s, int64_t t, double q) {
    return s->state.beatAtTime(microseconds(t), q);
}
double sampler_link_state_phase_at_time(const sampler_link_state *s, int64_t t, double q) {
    return s->state.phaseAtTime(microseconds(t), q);
}
int64_t sampler_link_state_time_at_beat(const sampler_link_state *s, double beat, double q) {
    return s->state.timeAtBeat(beat, q).count();
}
bool sampler_link_state_is_playing(const sampler_link_state *s) { return s->state.isPlaying(); }
int64_t sampler_link_state_time_for_is_playing(const sampler_link_state *s) { return s->state.timeForIsPlaying().count(); }

void sampler_link_state_set_tempo(sampler_link_state *s, double bpm, int64_t t) { s->state.setTempo(bpm, microseconds(t)); }
void sampler_link_state_request_beat_at_time(sampler_link_state *s, double beat, int64_t t, double q) {
    s->state.requestBeatAtTime(beat, microseconds(t), q);
}
void sampler_link_state_set_is_playing(sampler_link_state *s, bool playing, int64_t t) {
    s->state.setIsPlaying(playing, microseconds(t));
}
void sampler_link_state_set_is_playing_and_request_beat_at_time(sampler_link_state *s, bool playing, int64_t t,
                                                                 double beat, double q) {
    s->state.setIsPlayingAndRequestBeatAtTime(playing, microseconds(t), beat, q);
}

}
