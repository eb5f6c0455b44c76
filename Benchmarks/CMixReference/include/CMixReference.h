#ifndef CMIX_REFERENCE_H
#define CMIX_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

/// One voice of the reference mixer: a looping sound (planar; right == left for mono) read at
/// rate 1 from `position`, added into a stereo output with constant gains, or with a linear gain
/// ramp when `rampStep` is used (see cmix_render_ramped).
typedef struct {
    const float *left;
    const float *right;
    int64_t frames;
    int64_t position;
    /// Level × pan factor, per side (constant-gain mixing).
    float gainLeft, gainRight;
    /// Pan factors and the ramp: the gain of ramp frame k is (rampOrigin + rampStep × k) × pan.
    float panLeft, panRight;
    float rampOrigin, rampStep;
    int64_t rampElapsed;
    /// Playback speed; when not 1 the sound is read with linear interpolation, `phase` being
    /// the position between `position` and the next frame in 2^-32 of a frame (the frame after
    /// the last is frame 0), moved by `rateStep` (the rate in 32.32 fixed point) per frame.
    double rate;
    uint64_t rateStep;
    uint32_t phase;
} CMixVoice;

/// Overwrites `outLeft`/`outRight` with the sum of every voice over `frameCount` frames and
/// advances each voice, wrapping to frame 0 at its end. The same job as SamplerCore's mixer for
/// voices that play, loop forever and have no ramp (at their rate: 1, or varispeed).
void cmix_render(CMixVoice *voices, int count, float *outLeft, float *outRight, int frameCount);

/// The same with every voice's gain ramping (per-frame gain from the ramp index).
void cmix_render_ramped(CMixVoice *voices, int count, float *outLeft, float *outRight, int frameCount);

/// The same, added into `outLeft`/`outRight` (not cleared first): the declick tails.
void cmix_add_ramped(CMixVoice *voices, int count, float *outLeft, float *outRight, int frameCount);

/// A controller's glide: over each voice's first `glideFrames` frames its level ramps from
/// `rampOrigin` by `rampStep` a frame (× `panLeft`/`panRight`), then it plays at `gainLeft`/
/// `gainRight` (the level reached × the pan) for the rest of the period.
void cmix_render_glided(CMixVoice *voices, int count, float *outLeft, float *outRight, int frameCount, int glideFrames);

/// One streamed voice of the reference mixer: a ring of `capacity` frames (planar; right == left
/// for mono) that a writer fills ahead of the reader, read at rate 1 with constant gains, as the
/// engine reads a `StreamRing`: the read index, the write index (frames not yet written play as
/// silence, counted) and the end index are shared with the writer, read and written as atomics
/// (plain fields here, so that Swift imports the struct).
typedef struct {
    const float *left;
    const float *right;
    int64_t capacity;
    int64_t readIndex;
    int64_t writeIndex;
    int64_t endIndex;
    int64_t underrunFrames;
    float gainLeft, gainRight;
} CMixStream;

/// Overwrites `outLeft`/`outRight` with the sum of every stream over `frameCount` frames and
/// moves each one's read index on (the engine's job for streamed voices without a ramp).
void cmix_render_streams(CMixStream *streams, int count, float *outLeft, float *outRight, int frameCount);

/// The writer's part, between measurements: says the ring is full again (its content is left as
/// it is: slot j always holds the same sample).
void cmix_refill_streams(CMixStream *streams, int count);

/// One filtered voice of the reference mixer: a looping sound at rate 1 and a constant level
/// through a direct-form-I biquad (one for a mono sound, before its pan; one per channel for a
/// stereo sound), in double, its cutoff `baseCutoff` × 2^(cents / 1200) recomputed when the cents move.
typedef struct {
    const float *left;
    const float *right;
    int64_t frames;
    int64_t position;
    float level, panLeft, panRight;
    float baseCutoff, resonance;
    /// Coefficients and memory in double, as the engine's (and sfizz's).
    double b0, b1, b2, na1, na2;
    double lx1, lx2, ly1, ly2, rx1, rx2, ry1, ry2;
} CMixFilterVoice;

/// Each voice's 2-pole low-pass coefficients for its cutoff moved by `cents` (RBJ's cookbook, in
/// double, as the engine computes them).
void cmix_filter_coefficients(CMixFilterVoice *voices, int count, float cents, double sampleRate);

/// Overwrites `outLeft`/`outRight` with the sum of every filtered voice over `frameCount` frames.
void cmix_render_filtered(CMixFilterVoice *voices, int count, float *outLeft, float *outRight, int frameCount);

/// Reads `count` 64-bit words and returns their sum: a single-core read-bandwidth probe.
uint64_t cmix_read_sum(const uint64_t *data, size_t count);

#endif
