#!/usr/bin/env bash
# JACK keeps at most 8 servers in its shared-memory registry, and a server that was killed
# (not stopped) keeps its entry. When no jackd is running at all, every entry is stale: remove
# them so the test servers can start. Does nothing while any jackd runs (it may be yours).
if ! pgrep -x jackd >/dev/null 2>&1; then
    rm -f /dev/shm/jack-shm-registry /dev/shm/jack_sem.* /dev/shm/jack-[0-9]* /dev/shm/jack_*_[0-9]* 2>/dev/null || true
fi
