#!/usr/bin/env bash
# Measures the CPU time `sampler play` uses per JACK period with N looping voices on a private
# dummy server (period 256 at 48 kHz), from /proc/PID/stat over a fixed stretch of playing.
# It includes the control thread (a few µs per 10 ms tick), so it is an upper bound for the
# callback. Usage: scripts/callback-cpu.sh [VOICES...]   (default: 8 64)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=.build/release/sampler
[ -x "$bin" ] || swift build -c release --product sampler $(scripts/release-flags.sh) >/dev/null
dir=$(mktemp -d)
trap 'rm -rf "$dir"; [ -n "${jp:-}" ] && kill "$jp" 2>/dev/null; true' EXIT
name="sampler-cpu-$$"
jackd -n "$name" -d dummy -r 48000 -p 256 >/dev/null 2>&1 &
jp=$!
JACK_DEFAULT_SERVER="$name" jack_wait -w -t 5 >/dev/null 2>&1
ticks=$(getconf CLK_TCK)
printf "%8s %14s %16s\n" voices "CPU s / 20 s" "µs per period"
for n in "${@:-8 64}"; do
  for v in $n; do
    players=$(for i in $(seq 1 "$v"); do if [ "$i" -gt 1 ]; then printf ','; fi; printf '{"id":"p%d","sound":"s","loops":-1,"gain":0.01}' "$i"; done)
    printf '{"version":1,"tempo":120,"sounds":{"s":"%s"},"players":[%s]}' "$PWD/Samples/hihat-open.wav" "$players" > "$dir/p$v.json"
    "$bin" play --patch "$dir/p$v.json" --server "$name" --no-connect --duration 25 --quiet >/dev/null &
    pid=$!
    sleep 3   # let it start and settle (this is a measurement script, not a test)
    a=$(awk '{print $14+$15}' /proc/$pid/stat)
    sleep 20
    b=$(awk '{print $14+$15}' /proc/$pid/stat)
    wait $pid
    awk -v a="$a" -v b="$b" -v t="$ticks" -v v="$v" 'BEGIN { s=(b-a)/t; printf "%8d %14.3f %16.1f\n", v, s, s*1e6/(20*48000/256) }'
  done
done
