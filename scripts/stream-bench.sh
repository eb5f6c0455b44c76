#!/usr/bin/env bash
# Memory and CPU of streaming 1, 4 and 16 long files at once: each run is a fresh
# sampler-stream-bench process with one AudioSession on a private dummy JACK server (48 kHz,
# 256-frame periods), playing N streamed players of a ten-minute stereo file from different
# positions. Two files: 48 kHz (no resampling) and 44.1 kHz (resampled on the disk thread, with
# libsamplerate's medium sinc converter, the default, and its best one). Prints a table.
#
#   scripts/stream-bench.sh [seconds measured per run, default 10]
#
# The files are generated (sox) into a temporary directory and sit in the page cache, so this
# measures the streaming code, not the disk.
set -euo pipefail
cd "$(dirname "$0")/.."
measure=${1:-10}
scratch=${SCRATCH_PATH:-.build}

swift build -c release --product sampler-stream-bench --scratch-path "$scratch" $(scripts/release-flags.sh) >/dev/null
bench="$scratch/release/sampler-stream-bench"

work=$(mktemp -d)
server="stream-bench-$$"
jackd -n "$server" -d dummy -r 48000 -p 256 >/dev/null 2>&1 &
jackd_pid=$!
cleanup() {
    kill "$jackd_pid" 2>/dev/null || true
    wait "$jackd_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
JACK_DEFAULT_SERVER="$server" jack_wait -w -t 10 >/dev/null

sox -n -r 48000 -c 2 -b 16 "$work/long48.wav" synth 600 pinknoise vol 0.3
sox -n -r 44100 -c 2 -b 16 "$work/long44.wav" synth 600 pinknoise vol 0.3

mb() { awk -v kb="$1" 'BEGIN { printf "%.1f", kb / 1024 }'; }

printf '%-22s %7s %10s %12s %12s %9s %12s %10s\n' "file / converter" streams "RSS base" "+ prepared" "+ playing" "CPU %" "disk thr. %" underruns
for run in "long48.wav medium" "long44.wav medium" "long44.wav best"; do
    set -- $run
    label="${1%.wav} ($([ "$1" = long48.wav ] && echo "no resampling" || echo "$2"))"
    for n in 1 4 16; do
        line=$("$bench" --server "$server" --file "$work/$1" --streams "$n" --seconds "$measure" --converter "$2" | grep '^RESULT')
        get() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$line"; }
        base=$(get base_kb); prepared=$(get prepared_kb); playing=$(get playing_kb)
        printf '%-22s %7d %8.1f MB %9.1f MB %9.1f MB %9s %12s %10s\n' "$label" "$n" \
            "$(mb "$base")" "$(mb $((prepared - base)))" "$(mb $((playing - base)))" \
            "$(get cpu_pct)" "$(get disk_pct)" "$(get underrun_frames)"
    done
done
