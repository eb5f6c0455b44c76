// A C interface to Ableton Link (Debian's ableton-link-dev, header-only C++; GPL-2.0-or-later).
// Host times are microseconds on Link's clock, which on Linux is CLOCK_MONOTONIC_RAW: the clock
// JACK's jack_get_time() reads, so a Link time is a JACK host time.
//
// Every function is for control threads (Link's "app thread" calls): none is real-time safe.
#ifndef SAMPLER_CLINK_H
#define SAMPLER_CLINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sampler_link sampler_link;

/// A consistent copy of the session's state (tempo, beat timeline, start/stop) taken at one
/// moment; query it with the functions below, change it and commit it.
typedef struct sampler_link_state sampler_link_state;

/// A new Link instance at `bpm`, not yet enabled. NULL when it could not be made.
sampler_link *sampler_link_create(double bpm);
void sampler_link_destroy(sampler_link *link);

void sampler_link_enable(sampler_link *link, bool enabled);
bool sampler_link_is_enabled(const sampler_link *link);
void sampler_link_enable_start_stop_sync(sampler_link *link, bool enabled);
size_t sampler_link_peer_count(const sampler_link *link);
/// Link's clock now, in microseconds.
int64_t sampler_link_clock_micros(const sampler_link *link);

/// The session's state now (captureAppSessionState); free it with sampler_link_state_destroy.
sampler_link_state *sampler_link_capture(const sampler_link *link);
/// Commits `state` to the session (commitAppSessionState); `state` stays valid.
void sampler_link_commit(sampler_link *link, const sampler_link_state *state);
void sampler_link_state_destroy(sampler_link_state *state);

double sampler_link_state_tempo(const sampler_link_state *state);
double sampler_link_state_beat_at_time(const sampler_link_state *state, int64_t micros, double quantum);
double sampler_link_state_phase_at_time(const sampler_link_state *state, int64_t micros, double quantum);
int64_t sampler_link_state_time_at_beat(const sampler_link_state *state, double beat, double quantum);
bool sampler_link_state_is_playing(const sampler_link_state *state);
int64_t sampler_link_state_time_for_is_playing(const sampler_link_state *state);

void sampler_link_state_set_tempo(sampler_link_state *state, double bpm, int64_t at_micros);
void sampler_link_state_request_beat_at_time(sampler_link_state *state, double beat, int64_t micros, double quantum);
void sampler_link_state_set_is_playing(sampler_link_state *state, bool playing, int64_t at_micros);
void sampler_link_state_set_is_playing_and_request_beat_at_time(sampler_link_state *state, bool playing,
                                                                 int64_t micros, double beat, double quantum);

#ifdef __cplusplus
}
#endif

#endif
