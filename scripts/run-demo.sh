#!/usr/bin/env bash
# Plays the demo patch live. Uses the JACK server that is already running, if one answers;
# otherwise starts a private dummy server (no sound card needed), plays on it while recording
# to out/demo.wav, and stops that server by its PID afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=.build/release/sampler
patch=${PATCH:-Patches/drums.json}
duration=${DURATION:-8}
export JACK_NO_START_SERVER=1
if jack_lsp >/dev/null 2>&1; then
    echo "JACK server found: playing $patch for $duration s (Ctrl-C stops)"
    exec "$bin" play --patch "$patch" --duration "$duration"
fi
name="sampler-demo-$$"
mkdir -p out
echo "no JACK server is running: starting a private dummy server \"$name\" (silent, no sound card);"
echo "what it plays is recorded to out/demo.wav"
jackd -n "$name" -d dummy -r 48000 -p 256 >out/jackd-demo.log 2>&1 &
jackd_pid=$!
trap 'kill "$jackd_pid" 2>/dev/null; wait "$jackd_pid" 2>/dev/null || true' EXIT
JACK_DEFAULT_SERVER="$name" jack_wait -w -t 5 >/dev/null 2>&1
"$bin" play --patch "$patch" --duration "$duration" --server "$name" --record out/demo.wav
echo "stopped the dummy server (pid $jackd_pid); listen with: play out/demo.wav"
