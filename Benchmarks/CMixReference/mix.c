// The reference: the mixing job written as the plain C loop a good engineer would write, built
// with -O3 -march=native (restrict pointers, so the compiler vectorizes without alias checks).
#include "CMixReference.h"
#include <stdatomic.h>
#include <math.h>

static inline void add_mono(const float *restrict s, float *restrict l, float *restrict r, int n,
                            float gl, float gr) {
    for (int i = 0; i < n; i++) {
        float x = s[i];
        l[i] += x * gl;
        r[i] += x * gr;
    }
}

static inline void add_stereo(const float *restrict sl, const float *restrict sr, float *restrict l,
                              float *restrict r, int n, float gl, float gr) {
    for (int i = 0; i < n; i++) {
        l[i] += sl[i] * gl;
        r[i] += sr[i] * gr;
    }
}

static inline void add_mono_ramped(const float *restrict s, float *restrict l, float *restrict r, int n,
                                   float origin, float step, int64_t first, float pl, float pr) {
    for (int i = 0; i < n; i++) {
        float g = origin + step * (float)(first + i);
        float x = s[i] * g;
        l[i] += x * pl;
        r[i] += x * pr;
    }
}

static inline void add_stereo_ramped(const float *restrict sl, const float *restrict sr, float *restrict l,
                                     float *restrict r, int n, float origin, float step, int64_t first,
                                     float pl, float pr) {
    for (int i = 0; i < n; i++) {
        float g = origin + step * (float)(first + i);
        l[i] += sl[i] * g * pl;
        r[i] += sr[i] * g * pr;
    }
}

// Varispeed: one output frame per step, linear interpolation, the phase in 32.32 fixed point
// (as the engine does, so that both play the same frames with the same weights). Returns output
// frames written; stops when the position reaches the end of the sound.
static inline int add_varispeed(CMixVoice *restrict v, float *restrict l, float *restrict r, int n) {
    const float *restrict sl = v->left, *restrict sr = v->right;
    const int64_t frames = v->frames;
    const int64_t step_whole = (int64_t)(v->rateStep >> 32);
    const uint64_t step_phase = (uint32_t)v->rateStep;
    const float gl = v->gainLeft, gr = v->gainRight;
    int64_t pos = v->position;
    uint32_t phase = v->phase;
    int i = 0;
    while (i < n && pos < frames) {
        int64_t next = pos + 1 < frames ? pos + 1 : 0;
        float f = (float)(phase >> 8) * 0x1p-24f;
        float a = sl[pos], b = sr[pos];
        l[i] += (a + (sl[next] - a) * f) * gl;
        r[i] += (b + (sr[next] - b) * f) * gr;
        uint64_t sum = (uint64_t)phase + step_phase;
        phase = (uint32_t)sum;
        pos += step_whole + (int64_t)(sum >> 32);
        i++;
    }
    v->phase = phase;
    v->position = pos;
    return i;
}

static void clear(float *restrict l, float *restrict r, int frameCount) {
    for (int i = 0; i < frameCount; i++) { l[i] = 0; r[i] = 0; }
}

void cmix_render(CMixVoice *voices, int count, float *outLeft, float *outRight, int frameCount) {
    clear(outLeft, outRight, frameCount);
    for (int v = 0; v < count; v++) {
        CMixVoice *voice = &voices[v];
        int out = 0;
        if (voice->rate != 1) {
            while (out < frameCount) {
                out += add_varispeed(voice, outLeft + out, outRight + out, frameCount - out);
                if (voice->position >= voice->frames) voice->position -= voice->frames;
            }
            continue;
        }
        while (out < frameCount) {
            int64_t left = voice->frames - voice->position;
            int n = frameCount - out < left ? frameCount - out : (int)left;
            const int64_t p = voice->position;
            if (voice->left == voice->right) {
                add_mono(voice->left + p, outLeft + out, outRight + out, n, voice->gainLeft, voice->gainRight);
            } else {
                add_stereo(voice->left + p, voice->right + p, outLeft + out, outRight + out, n,
                           voice->gainLeft, voice->gainRight);
            }
            out += n;
            voice->position += n;
            if (voice->position == voice->frames) voice->position = 0;
        }
    }
}

void cmix_render_ramped(CMixVoice *voices, int count, float *outLeft, float *outRight, int frameCount) {
    clear(outLeft, outRight, frameCount);
    cmix_add_ramped(voices, count, outLeft, outRight, frameCount);
}

void cmix_add_ramped(CMixVoice *voices, int count, float *outLeft, float *outRight, int frameCount) {
    for (int v = 0; v < count; v++) {
        CMixVoice *voice = &voices[v];
        int out = 0;
        while (out < frameCount) {
            int64_t left = voice->frames - voice->position;
            int n = frameCount - out < left ? frameCount - out : (int)left;
            const int64_t p = voice->position;
            if (voice->left == voice->right) {
                add_mono_ramped(voice->left + p, outLeft + out, outRight + out, n, voice->rampOrigin,
                                voice->rampStep, voice->rampElapsed, voice->panLeft, voice->panRight);
            } else {
                add_stereo_ramped(voice->left + p, voice->right + p, outLeft + out, outRight + out, n,
                                  voice->rampOrigin, voice->rampStep, voice->rampElapsed,
                                  voice->panLeft, voice->panRight);
            }
            out += n;
            voice->rampElapsed += n;
            voice->position += n;
            if (voice->position == voice->frames) voice->position = 0;
        }
    }
}

void cmix_render_glided(CMixVoice *voices, int count, float *outLeft, float *outRight, int frameCount, int glideFrames) {
    clear(outLeft, outRight, frameCount);
    const int glide = glideFrames < frameCount ? glideFrames : frameCount;
    for (int v = 0; v < count; v++) {
        CMixVoice *voice = &voices[v];
        int out = 0;
        while (out < frameCount) {
            const int end = out < glide ? glide : frameCount;
            int64_t left = voice->frames - voice->position;
            int n = end - out < left ? end - out : (int)left;
            const int64_t p = voice->position;
            const int mono = voice->left == voice->right;
            if (out < glide) {
                if (mono) {
                    add_mono_ramped(voice->left + p, outLeft + out, outRight + out, n, voice->rampOrigin, voice->rampStep, out,
                                    voice->panLeft, voice->panRight);
                } else {
                    add_stereo_ramped(voice->left + p, voice->right + p, outLeft + out, outRight + out, n, voice->rampOrigin,
                                      voice->rampStep, out, voice->panLeft, voice->panRight);
                }
            } else if (mono) {
                add_mono(voice->left + p, outLeft + out, outRight + out, n, voice->gainLeft, voice->gainRight);
            } else {
                add_stereo(voice->left + p, voice->right + p, outLeft + out, outRight + out, n, voice->gainLeft, voice->gainRight);
            }
            out += n;
            voice->position += n;
            if (voice->position == voice->frames) voice->position = 0;
        }
    }
}

// The shared indices as the atomics they are.
#define A(field) ((_Atomic int64_t *)&(field))

void cmix_render_streams(CMixStream *streams, int count, float *outLeft, float *outRight, int frameCount) {
    clear(outLeft, outRight, frameCount);
    for (int v = 0; v < count; v++) {
        CMixStream *s = &streams[v];
        const int64_t read = atomic_load_explicit(A(s->readIndex), memory_order_relaxed);
        const int64_t written = atomic_load_explicit(A(s->writeIndex), memory_order_acquire);
        const int64_t end = atomic_load_explicit(A(s->endIndex), memory_order_acquire);
        int64_t frames = frameCount;
        if (end != INT64_MAX && read + frames >= end) frames = end > read ? end - read : 0;
        int64_t available = written - read < frames ? written - read : frames;
        if (available < 0) available = 0;
        int64_t done = 0;
        while (done < available) {
            const int64_t at = (read + done) % s->capacity;
            const int64_t rest = available - done, room = s->capacity - at;
            const int n = (int)(rest < room ? rest : room);
            if (s->left == s->right) {
                add_mono(s->left + at, outLeft + done, outRight + done, n, s->gainLeft, s->gainRight);
            } else {
                add_stereo(s->left + at, s->right + at, outLeft + done, outRight + done, n, s->gainLeft, s->gainRight);
            }
            done += n;
        }
        if (available < frames) atomic_fetch_add_explicit(A(s->underrunFrames), frames - available, memory_order_relaxed);
        atomic_store_explicit(A(s->readIndex), read + frames, memory_order_release);
    }
}

void cmix_refill_streams(CMixStream *streams, int count) {
    for (int v = 0; v < count; v++) {
        const int64_t read = atomic_load_explicit(A(streams[v].readIndex), memory_order_acquire);
        atomic_store_explicit(A(streams[v].writeIndex), read + streams[v].capacity, memory_order_release);
    }
}

uint64_t cmix_read_sum(const uint64_t *data, size_t count) {
    uint64_t a = 0, b = 0, c = 0, d = 0;
    size_t i = 0;
    for (; i + 4 <= count; i += 4) {
        a += data[i];
        b += data[i + 1];
        c += data[i + 2];
        d += data[i + 3];
    }
    for (; i < count; i++) a += data[i];
    return a + b + c + d;
}

void cmix_filter_coefficients(CMixFilterVoice *voices, int count, float cents, double sampleRate) {
    for (int v = 0; v < count; v++) {
        CMixFilterVoice *voice = &voices[v];
        float c = cents < -12000 ? -12000 : cents > 12000 ? 12000 : cents;
        float cutoff = voice->baseCutoff * exp2f(c / 1200);
        double f = cutoff < 1 ? 1 : cutoff > 20000 ? 20000 : cutoff;
        if (f > 0.49 * sampleRate) f = 0.49 * sampleRate;
        double w0 = 2 * M_PI * f / sampleRate;
        double q = pow(10, 0.05 * voice->resonance);
        if (q < 0.001) q = 0.001;
        double cw = cos(w0), alpha = sin(w0) / (2 * q), a0 = 1 + alpha;
        voice->b0 = (1 - cw) / 2 / a0;
        voice->b1 = (1 - cw) / a0;
        voice->b2 = voice->b0;
        voice->na1 = 2 * cw / a0;
        voice->na2 = -(1 - alpha) / a0;
    }
}

void cmix_render_filtered(CMixFilterVoice *voices, int count, float *outLeft, float *outRight, int frameCount) {
    clear(outLeft, outRight, frameCount);
    for (int v = 0; v < count; v++) {
        CMixFilterVoice *voice = &voices[v];
        const double b0 = voice->b0, b1 = voice->b1, b2 = voice->b2, na1 = voice->na1, na2 = voice->na2;
        int out = 0;
        while (out < frameCount) {
            int64_t left = voice->frames - voice->position;
            int n = frameCount - out < left ? frameCount - out : (int)left;
            const int64_t p = voice->position;
            float *restrict l = outLeft + out, *restrict r = outRight + out;
            if (voice->left == voice->right) {
                const float *restrict s = voice->left + p;
                const float level = voice->level, pl = voice->panLeft, pr = voice->panRight;
                double x1 = voice->lx1, x2 = voice->lx2, y1 = voice->ly1, y2 = voice->ly2;
                for (int i = 0; i < n; i++) {
                    double x = (double)(s[i] * level);
                    double y = b0 * x + b1 * x1 + b2 * x2 + na2 * y2 + na1 * y1;
                    x2 = x1; x1 = x; y2 = y1; y1 = y;
                    float yf = (float)y;
                    l[i] = l[i] + yf * pl;
                    r[i] = r[i] + yf * pr;
                }
                voice->lx1 = x1; voice->lx2 = x2; voice->ly1 = y1; voice->ly2 = y2;
            } else {
                const float *restrict sl = voice->left + p, *restrict sr = voice->right + p;
                const float gl = voice->level * voice->panLeft, gr = voice->level * voice->panRight;
                double ax1 = voice->lx1, ax2 = voice->lx2, ay1 = voice->ly1, ay2 = voice->ly2;
                double bx1 = voice->rx1, bx2 = voice->rx2, by1 = voice->ry1, by2 = voice->ry2;
                for (int i = 0; i < n; i++) {
                    double xa = (double)(sl[i] * gl), xb = (double)(sr[i] * gr);
                    double ya = b0 * xa + b1 * ax1 + b2 * ax2 + na2 * ay2 + na1 * ay1;
                    double yb = b0 * xb + b1 * bx1 + b2 * bx2 + na2 * by2 + na1 * by1;
                    ax2 = ax1; ax1 = xa; ay2 = ay1; ay1 = ya;
                    bx2 = bx1; bx1 = xb; by2 = by1; by1 = yb;
                    l[i] = l[i] + (float)ya;
                    r[i] = r[i] + (float)yb;
                }
                voice->lx1 = ax1; voice->lx2 = ax2; voice->ly1 = ay1; voice->ly2 = ay2;
                voice->rx1 = bx1; voice->rx2 = bx2; voice->ry1 = by1; voice->ry2 = by2;
            }
            out += n;
            voice->position += n;
            if (voice->position == voice->frames) voice->position = 0;
        }
    }
}
