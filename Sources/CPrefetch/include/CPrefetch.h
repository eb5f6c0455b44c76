#ifndef CPREFETCH_H
#define CPREFETCH_H

/// A hint that `address` will be read soon: the cache line is fetched without the CPU waiting for
/// it (Swift has no prefetch intrinsic; a plain load would stall when the line is far away).
/// Inlined into the caller; no call, no lock, no allocation. Any thread.
static inline __attribute__((always_inline)) void sampler_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

/// An anonymous file in memory (`memfd_create`, close-on-exec), for memory mapped more than
/// once (a ring whose end runs on into its start); -1 with errno set when the system refuses.
/// Control thread.
int sampler_memfd(const char *name);

/// Reads one byte of every page of `bytes` bytes from `address`, so that the pages are mapped
/// (a page mapped twice has an entry for each of its addresses). Not the render thread.
void sampler_touch_pages(const void *address, unsigned long bytes);

#endif
