// The prefetch hint is inline in the header; the anonymous file needs _GNU_SOURCE, which the
// Swift side's Glibc module does not define.
#define _GNU_SOURCE
#include <sys/mman.h>
#include "CPrefetch.h"

#include <unistd.h>

int sampler_memfd(const char *name) { return memfd_create(name, MFD_CLOEXEC); }

void sampler_touch_pages(const void *address, unsigned long bytes) {
    const volatile char *p = address;
    unsigned long page = (unsigned long)sysconf(_SC_PAGESIZE);
    unsigned long start = (unsigned long)p % page;
    for (unsigned long at = 0; at < bytes + start; at += page) {
        (void)p[at < start ? 0 : at - start];
    }
    if (bytes > 0) (void)p[bytes - 1];
}
