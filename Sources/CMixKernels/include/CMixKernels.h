#ifndef CMIXKERNELS_H
#define CMIXKERNELS_H

#include <stdint.h>

/// Whether this CPU runs `sampler_varispeed_span_avx512` (AVX-512 F, DQ and VL). Read once, off
/// the render path.
int sampler_has_avx512(void);

/// Adds `count` output frames of a source played at fixed-point rate `rate` (32.32) from
/// fixed-point position `at`, as `Mixing.addVarispeedSpan` does, to the bit: frame k
/// interpolates between source frames j and j + 1 (j the whole part of at + k × rate) by the top
/// 24 bits of the fraction, `a + (b - a) × f`, times its gain, added to the output. Mono when
/// `left == right` (read and interpolated once per frame). The caller knows every j + 1 is inside
/// the source, `at + count × rate` is below 2^64, and `sampler_has_avx512()` is true.
/// Neither locks nor allocates.
void sampler_varispeed_span_avx512(const float *left, const float *right, uint64_t at, uint64_t rate, long count,
                                   float *outLeft, float *outRight, float gainLeft, float gainRight);

/// As `sampler_varispeed_span_avx512` under a gain ramp, as `Mixing.addRampedVarispeedSpan`
/// does, to the bit: frame k's interpolated sample times origin + step × (elapsed + k), times
/// the pan's factor, added to the output.
void sampler_varispeed_ramped_span_avx512(const float *left, const float *right, uint64_t at, uint64_t rate, long count,
                                          float *outLeft, float *outRight, float origin, float step, long elapsed,
                                          float panLeft, float panRight);

#endif
