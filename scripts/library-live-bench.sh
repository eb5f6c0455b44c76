#!/usr/bin/env bash
# The streamed library live (issue 51): the piano-sized library (1,408 stereo 16-bit 44.1 kHz files
# of 4 s, 1 GB; `sampler-bench --write-library`) played by `sampler play` on a private dummy JACK
# server (48 kHz, 256-frame periods) beside two busy loops, for SECONDS (default 60) of chords
# under the sustain pedal (about 64 voices at once, every one streaming its tail from disk).
# Prints the exit line (tails read late, notes refused, xruns, the most voices at once) and the
# CPU time of the threads that read the tails, from which: how many voices a core streams.
#
#   scripts/library-live-bench.sh [SECONDS] [extra `sampler play` options]
#
# The files sit in the page cache (they were just written): this measures the streaming code,
# not the disk. Exits non-zero when a tail was read late or the run failed.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
case "$seconds" in
    ''|*[!0-9]*|0) echo "library-live-bench: SECONDS must be a whole number of seconds above 0, got '$seconds'" >&2; exit 2 ;;
esac
scratch=${SCRATCH_PATH:-.build}
flags=$(scripts/release-flags.sh)

swift build -c release --product sampler --scratch-path "$scratch" $flags >/dev/null
swift build -c release --product sampler-bench --scratch-path "$scratch" $flags >/dev/null
bin=$(swift build -c release --scratch-path "$scratch" --show-bin-path $flags)

work=$(mktemp -d)
server="library-live-$$"
busy=()
jackd_pid=""
sampler_pid=""
cleanup() {
    [ -n "$sampler_pid" ] && kill "$sampler_pid" 2>/dev/null || true
    for pid in "${busy[@]}"; do kill "$pid" 2>/dev/null || true; done
    if [ -n "$jackd_pid" ]; then
        kill "$jackd_pid" 2>/dev/null || true
        wait "$jackd_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

"$bin/sampler-bench" --write-library "$work" --seconds "$seconds" | tee "$work/written.txt" | grep -v '^NOTES'
cat "$work"/lib/*.wav >/dev/null

jackd -n "$server" -d dummy -r 48000 -p 256 >/dev/null 2>&1 &
jackd_pid=$!
JACK_DEFAULT_SERVER="$server" jack_wait -w -t 10 >/dev/null 2>&1

for _ in 1 2; do
    sh -c 'while :; do :; done' &
    busy+=($!)
done

"$bin/sampler" play --server "$server" --patch "$work/piano.sfz" --midi "$work/groove.mid" \
    --duration "$seconds" --stream-voices 96 "$@" >"$work/out.txt" 2>&1 &
sampler_pid=$!
# The CPU time (utime + stime, clock ticks) of the threads that read tails: the filler's
# (`sampler tails`) and the dispatch workers it reads files on side by side (which the load used
# before). Each thread's time counts from when the sampler says it is playing (or from when the
# thread appears), and a thread that exits keeps what it had.
declare -A first=() last=()
sample() {
    local task id comm fields
    for task in /proc/"$sampler_pid"/task/*; do
        comm=$(cat "$task/comm" 2>/dev/null) || continue
        case "$comm" in
            "sampler tails"|*qos*) ;;
            *) continue ;;
        esac
        # The fields after the command's closing parenthesis (the command may hold spaces):
        # utime and stime are the 12th and 13th of them.
        fields=$(sed 's/^.*) //' "$task/stat" 2>/dev/null) || continue
        id=${task##*/}
        last[$id]=$(echo "$fields" | awk '{print $12 + $13}')
        [ -n "${first[$id]:-}" ] || first[$id]=${last[$id]}
    done
}
playing=""
while kill -0 "$sampler_pid" 2>/dev/null; do
    if [ -z "$playing" ] && grep -q '^playing' "$work/out.txt" 2>/dev/null; then
        sample
        for id in "${!last[@]}"; do first[$id]=${last[$id]}; done
        playing=yes
    elif [ -n "$playing" ]; then
        sample
    fi
    sleep 1
done
ticks=0
for id in "${!last[@]}"; do ticks=$((ticks + last[$id] - first[$id])); done
status=0
wait "$sampler_pid" || status=$?
sampler_pid=""

for pid in "${busy[@]}"; do kill "$pid" 2>/dev/null || true; done
busy=()

line=$(grep '^played' "$work/out.txt" || true)
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; jackd dummy, 48 kHz, 256-frame periods; two busy loops beside"
echo "sampler play, $seconds s of chords under the sustain pedal (16 notes a second) from the 1,408-file library:"
echo "  $line"
grep -v '^played' "$work/out.txt" | grep -v '^\s*$' | sed 's/^/  /' | tail -n 5 || true
hz=$(getconf CLK_TCK)
notes=$(sed -n 's/^NOTES //p' "$work/written.txt")
awk -v t="$ticks" -v hz="$hz" -v s="$seconds" -v n="${notes:-0}" 'BEGIN {
    cpu = t / hz
    printf "  reading tails (the filler and its helpers): %.2f s of CPU in %d s (%.1f%% of a core)", cpu, s, 100 * cpu / s
    if (cpu > 0 && n > 0) printf "; %d notes, each a voice reading its tail (4 s, 44.1 -> 48 kHz): a core reads the tails of %.0f new voices a second\n", n, n / cpu
    else printf "\n"
}'
[ "$status" = 0 ] || { echo "sampler play exited with status $status"; exit 1; }
[ -n "$line" ] || { echo "sampler play printed no exit line"; exit 1; }
if echo "$line" | grep -q "not read from disk in time"; then exit 1; fi
