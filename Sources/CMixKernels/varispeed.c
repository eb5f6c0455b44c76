// The varispeed span in AVX-512 (see CMixKernels.h). Built for any x86-64 target: the function
// carries its own target attribute, and the engine calls it only where the CPU has AVX-512.
// No fused multiply-add anywhere: every product and sum is rounded as in the Swift kernel.
#pragma clang fp contract(off)

#include "CMixKernels.h"

#if defined(__x86_64__) && defined(__clang__)
#include <immintrin.h>

int sampler_has_avx512(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
}

#define KERNEL __attribute__((target("avx512f,avx512dq,avx512vl")))

// Sixteen frames' source offsets from `base` (the first frame's j) and weights, from their
// 32.32 positions in two vectors of eight.
KERNEL static inline void positions(__m512i p0, __m512i p1, uint64_t base, __m512i *offsets, __m512 *weights) {
    const __m512i b = _mm512_set1_epi64((long long)base);
    const __m256i j0 = _mm512_cvtepi64_epi32(_mm512_sub_epi64(_mm512_srli_epi64(p0, 32), b));
    const __m256i j1 = _mm512_cvtepi64_epi32(_mm512_sub_epi64(_mm512_srli_epi64(p1, 32), b));
    *offsets = _mm512_inserti64x4(_mm512_castsi256_si512(j0), j1, 1);
    // The low 32 bits of each position, shifted right by 8: below 2^24, so exact as a float.
    const __m256i f0 = _mm512_cvtepi64_epi32(p0), f1 = _mm512_cvtepi64_epi32(p1);
    const __m512i f = _mm512_srli_epi32(_mm512_inserti64x4(_mm512_castsi256_si512(f0), f1, 1), 8);
    *weights = _mm512_mul_ps(_mm512_cvtepi32_ps(f), _mm512_set1_ps(0x1p-24f));
}

// One channel's sixteen interpolated frames: from a window of 32 source frames at `source`
// (masked to the frames needed: `low` of the first 16, `high` of the next) when `windowed`,
// else gathered.
KERNEL static inline __m512 interpolate(const float *source, __m512i offsets, __m512 weights, int windowed, __mmask16 low,
                                        __mmask16 high) {
    __m512 a, b;
    const __m512i next = _mm512_add_epi32(offsets, _mm512_set1_epi32(1));
    if (windowed) {
        const __m512 lower = _mm512_maskz_loadu_ps(low, source);
        const __m512 upper = _mm512_maskz_loadu_ps(high, source + 16);
        a = _mm512_permutex2var_ps(lower, offsets, upper);
        b = _mm512_permutex2var_ps(lower, next, upper);
    } else {
        a = _mm512_i32gather_ps(offsets, source, 4);
        b = _mm512_i32gather_ps(next, source, 4);
    }
    return _mm512_add_ps(a, _mm512_mul_ps(_mm512_sub_ps(b, a), weights));
}

// Both kernels: with `ramping`, frame k's gain is origin + step × (elapsed + k) (each rounded
// as in Swift: the index converted to float, the product, the sum), times the pan's factor.
KERNEL static inline void span(const float *left, const float *right, uint64_t at, uint64_t rate, long count,
                               float *outLeft, float *outRight, float gainLeft, float gainRight,
                               int ramping, float origin, float step, long elapsed) {
    const int mono = left == right;
    // Sixteen frames span at most 15 × rate source frames past the first, and the last needs
    // its next: within a window of 32 when the rate is at most 2; otherwise gathered, as long
    // as the offsets fit in 32 bits.
    const int windowed = rate <= (2ull << 32);
    const int gathered = rate < (1ull << 58);
    const __m512 gl = _mm512_set1_ps(gainLeft), gr = _mm512_set1_ps(gainRight);
    const __m512 rampOrigin = _mm512_set1_ps(origin), rampStep = _mm512_set1_ps(step);
    const __m512i lanes0 = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0), lanes1 = _mm512_set_epi64(15, 14, 13, 12, 11, 10, 9, 8);
    const __m512i steps0 = _mm512_mullo_epi64(lanes0, _mm512_set1_epi64((long long)rate));
    const __m512i steps1 = _mm512_add_epi64(steps0, _mm512_set1_epi64((long long)(8 * rate)));
    long k = 0;
    if (windowed || gathered) {
        for (; k + 16 <= count; k += 16) {
            const uint64_t p = at + (uint64_t)k * rate;
            const uint64_t base = p >> 32;
            const __m512i at0 = _mm512_set1_epi64((long long)p);
            __m512i offsets;
            __m512 weights;
            positions(_mm512_add_epi64(at0, steps0), _mm512_add_epi64(at0, steps1), base, &offsets, &weights);
            // The window read up to the last frame's next only (offsets 0 … last + 1, at most
            // 32 frames when windowed), never past the source's end.
            const uint64_t needed = ((p + 15 * rate) >> 32) - base + 2;
            __mmask16 low = 0, high = 0;
            if (windowed) {
                low = needed >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << needed) - 1);
                high = needed > 16 ? (__mmask16)((1u << (needed - 16)) - 1) : 0;
            }
            __m512 xl = interpolate(left + base, offsets, weights, windowed, low, high);
            __m512 xr = mono ? xl : interpolate(right + base, offsets, weights, windowed, low, high);
            if (ramping) {
                const __m512i e = _mm512_set1_epi64((long long)(elapsed + k));
                const __m256 e0 = _mm512_cvtepi64_ps(_mm512_add_epi64(e, lanes0));
                const __m256 e1 = _mm512_cvtepi64_ps(_mm512_add_epi64(e, lanes1));
                const __m512 index = _mm512_insertf32x8(_mm512_castps256_ps512(e0), e1, 1);
                const __m512 g = _mm512_add_ps(rampOrigin, _mm512_mul_ps(rampStep, index));
                xl = _mm512_mul_ps(xl, g);
                xr = mono ? xl : _mm512_mul_ps(xr, g);
            }
            _mm512_storeu_ps(outLeft + k, _mm512_add_ps(_mm512_loadu_ps(outLeft + k), _mm512_mul_ps(xl, gl)));
            _mm512_storeu_ps(outRight + k, _mm512_add_ps(_mm512_loadu_ps(outRight + k), _mm512_mul_ps(xr, gr)));
        }
    }
    for (; k < count; k++) {
        const uint64_t p = at + (uint64_t)k * rate;
        const long j = (long)(p >> 32);
        const float f = (float)((uint32_t)p >> 8) * 0x1p-24f;
        const float a = left[j], b = left[j + 1];
        float xl = a + (b - a) * f;
        float xr = xl;
        if (!mono) {
            const float c = right[j], d = right[j + 1];
            xr = c + (d - c) * f;
        }
        if (ramping) {
            const float g = origin + step * (float)(elapsed + k);
            xl = xl * g;
            xr = mono ? xl : xr * g;
        }
        outLeft[k] += xl * gainLeft;
        outRight[k] += xr * gainRight;
    }
}

KERNEL void sampler_varispeed_span_avx512(const float *left, const float *right, uint64_t at, uint64_t rate, long count,
                                          float *outLeft, float *outRight, float gainLeft, float gainRight) {
    span(left, right, at, rate, count, outLeft, outRight, gainLeft, gainRight, 0, 0, 0, 0);
}

KERNEL void sampler_varispeed_ramped_span_avx512(const float *left, const float *right, uint64_t at, uint64_t rate, long count,
                                                 float *outLeft, float *outRight, float origin, float step, long elapsed,
                                                 float panLeft, float panRight) {
    span(left, right, at, rate, count, outLeft, outRight, panLeft, panRight, 1, origin, step, elapsed);
}

#else

int sampler_has_avx512(void) { return 0; }

// Never called where there is no AVX-512 (`sampler_has_avx512` is 0).
void sampler_varispeed_span_avx512(const float *left, const float *right, uint64_t at, uint64_t rate, long count,
                                   float *outLeft, float *outRight, float gainLeft, float gainRight) {
    (void)left; (void)right; (void)at; (void)rate; (void)count; (void)outLeft; (void)outRight; (void)gainLeft; (void)gainRight;
}

void sampler_varispeed_ramped_span_avx512(const float *left, const float *right, uint64_t at, uint64_t rate, long count,
                                          float *outLeft, float *outRight, float origin, float step, long elapsed,
                                          float panLeft, float panRight) {
    (void)left; (void)right; (void)at; (void)rate; (void)count; (void)outLeft; (void)outRight; (void)origin; (void)step;
    (void)elapsed; (void)panLeft; (void)panRight;
}

#endif
