#!/usr/bin/env bash
# Test servers (`sampler-test-PID-N`) and Link namespace holders
# (`sampler-link-namespace-holder-PID`) whose test process PID is gone: left behind by a test
# process that crashed (its deferred stops never ran). Stopped by their own PIDs.
for pid in $(pgrep -x jackd 2>/dev/null); do
    owner=$(tr '\0' ' ' </proc/"$pid"/cmdline 2>/dev/null | sed -n 's/.*-n sampler-test-\([0-9]*\)-.*/\1/p')
    if [ -n "$owner" ] && ! kill -0 "$owner" 2>/dev/null; then
        echo "stopping a stale test server (pid $pid)"
        kill "$pid"
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
done
for pid in $(pgrep -f '^sampler-link-namespace-holder-' 2>/dev/null); do
    owner=$(tr '\0' ' ' </proc/"$pid"/cmdline 2>/dev/null | sed -n 's/^sampler-link-namespace-holder-\([0-9]*\).*/\1/p')
    if [ -n "$owner" ] && ! kill -0 "$owner" 2>/dev/null; then echo "stopping a stale Link namespace holder (pid $pid)"; kill -KILL "$pid"; fi
done

# JACK keeps at most 8 servers in its shared-memory registry, and a server that was killed
# (not stopped) keeps its entry. When no jackd is running at all, every entry is stale: remove
# them so the test servers can start. Does nothing while any jackd runs (it may be yours).
if ! pgrep -x jackd >/dev/null 2>&1; then
    rm -f /dev/shm/jack-shm-registry /dev/shm/jack_sem.* /dev/shm/jack-[0-9]* /dev/shm/jack_*_[0-9]* 2>/dev/null || true
fi
