// The prefetch hint is inline in the header; the anonymous file needs _GNU_SOURCE, which the
// Swift side's Glibc module does not define.
#define _GNU_SOURCE
#include <sys/mman.h>
#include "CPrefetch.h"

int sampler_memfd(const char *name) { return memfd_create(name, MFD_CLOEXEC); }
