#!/usr/bin/env bash
# make soak DURATION=3600: a long live run on a private dummy JACK server (asynchronous, as a
# user's would be). First the idle server's own xruns are counted (DURATION/10 s, at least 10 s,
# with only the witness connected), then `sampler-soak` plays for DURATION seconds while four
# control threads drive it at random and the patch is reloaded every 10 s, with the independent
# witness (sampler-capture --summary) counting what reached it. Reports xruns against the idle
# rate, lost periods, RSS and descriptors; fails on growth: RSS over MAX_RSS_GROWTH_KB (default
# 1024), descriptors, a JACK client left behind, a non-finite sample.
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${DURATION:-120}"
patch="${PATCH:-Patches/drums.json}"
max_growth="${MAX_RSS_GROWTH_KB:-1024}"
swift="${SWIFT:-swift}"
for p in sampler-soak sampler-capture; do "$swift" build --product "$p" >/dev/null; done
bin=$("$swift" build --show-bin-path)
name="sampler-soak-$$"
jackd -n "$name" -d dummy -r 48000 -p 256 >/dev/null 2>&1 &
jackd_pid=$!
cleanup() { kill "$jackd_pid" 2>/dev/null; wait "$jackd_pid" 2>/dev/null || true; }
trap cleanup EXIT
export JACK_DEFAULT_SERVER="$name" JACK_NO_START_SERVER=1
jack_wait -w -t 10 >/dev/null 2>&1
field() { sed -n "s/.*$1=\([0-9]*\).*/\1/p"; }

idle=$(( duration / 10 )); [ "$idle" -lt 10 ] && idle=10
idle_out=$("$bin/sampler-capture" --server "$name" --ports a,b --frames $(( idle * 48000 )) --summary --no-connect --name idle)
idle_xruns=$(echo "$idle_out" | field xruns)
echo "idle server: $idle_xruns xruns in $idle s"

witness_log=$(mktemp)
"$bin/sampler-capture" --server "$name" --ports a,b --frames $(( (duration - 2) * 48000 )) --summary --no-connect --name wit >"$witness_log" &
witness_pid=$!
"$bin/sampler-soak" --seconds "$duration" --patch "$patch" --max-rss-growth "$max_growth" > >(tee /tmp/sampler-soak-$$.log) &
soak_pid=$!
for _ in $(seq 100); do jack_lsp 2>/dev/null | grep -q '^soak:out_L' && break; sleep 0.1; done
jack_connect soak:out_L wit:in_0 && jack_connect soak:out_R wit:in_1
status=0
wait "$soak_pid" || status=1
wait "$witness_pid" || status=1
witness=$(grep summary "$witness_log" || true)
rm -f "$witness_log"
echo "witness: ${witness#summary }"
active_xruns=$(echo "$witness" | field xruns)
nonfinite=$(echo "$witness" | field nonfinite)
allowed=$(( 2 * idle_xruns * duration / idle + 10 ))
echo "xruns: $active_xruns while playing $duration s; the idle server had $idle_xruns in $idle s (allowed: $allowed)"
# Reported, not failed on: on a shared machine the load (and with it the xrun rate) changes
# between the idle measurement and the run; what the soak fails on is growth.
if [ "${active_xruns:-0}" -gt "$allowed" ]; then echo "note: more xruns than twice the idle server's rate (+10)"; fi
if [ "${nonfinite:-0}" -gt 0 ]; then echo "FAIL: $nonfinite non-finite samples reached the witness"; status=1; fi
if jack_lsp 2>/dev/null | grep -q '^soak:'; then echo "FAIL: the soak's JACK client was left behind"; status=1; fi
rm -f /tmp/sampler-soak-$$.log
[ "$status" -eq 0 ] && echo "soak passed" || echo "soak FAILED"
exit "$status"
