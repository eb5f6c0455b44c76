#include <sndfile.h>

/// The first loop of `file`'s instrument chunk (libsndfile's `end` is one past its last frame):
/// 1 with `start`/`end` set, 0 when the file names no loop. (Swift does not import
/// `SF_INSTRUMENT`'s array of anonymous structs.)
/// The MIDI note `file`'s instrument chunk names as its root (its `smpl` chunk's unity note):
/// 1 with `note` set, 0 when the file has no instrument chunk.
static inline int sampler_base_note(SNDFILE *file, int *note) {
    SF_INSTRUMENT instrument;
    if (sf_command(file, SFC_GET_INSTRUMENT, &instrument, sizeof instrument) != SF_TRUE) return 0;
    *note = instrument.basenote;
    return 1;
}

static inline int sampler_first_loop(SNDFILE *file, unsigned int *start, unsigned int *end) {
    SF_INSTRUMENT instrument;
    if (sf_command(file, SFC_GET_INSTRUMENT, &instrument, sizeof instrument) != SF_TRUE || instrument.loop_count < 1) return 0;
    *start = instrument.loops[0].start;
    *end = instrument.loops[0].end;
    return 1;
}
