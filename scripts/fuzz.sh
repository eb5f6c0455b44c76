#!/usr/bin/env bash
# make fuzz: builds the libFuzzer targets (release, fuzzer + address sanitizers) and runs each on
# a copy of its seed corpus (Fuzz/corpus/TARGET) for FUZZ_SECONDS seconds (default 30).
# FUZZ_TARGETS picks some (default: all); FUZZ_PARALLEL=1 runs them at once. A crash leaves its
# input in Fuzz/crashes/ and fails.
#   FUZZ_SECONDS=1800 make fuzz                   # the long run: 30 minutes per target, one by one
#   FUZZ_SECONDS=1800 FUZZ_PARALLEL=1 make fuzz   # the same, all at once
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-30}"
targets="${FUZZ_TARGETS:-json tempo hydrogen sound midi osc smf sfz}"
# Whole seconds, at most a week: libFuzzer reads -max_total_time=abc, and 0, as "no limit", so a
# mistyped value would fuzz until stopped.
. scripts/whole-number.sh
seconds=$(whole_number fuzz FUZZ_SECONDS "$seconds" 1 604800 seconds) || exit 2
for t in $targets; do
    [[ " json tempo hydrogen sound midi osc smf sfz " == *" $t "* ]] || { echo "fuzz: FUZZ_TARGETS: no target named '$t' (the targets: json tempo hydrogen sound midi osc smf sfz)" >&2; exit 2; }
done
# SwiftPM gives -sanitize=fuzzer to the fuzz target only; the coverage flags instrument every
# module (without them the libraries are fuzzed blind: 3 counters instead of ~17,000).
SAMPLER_FUZZ=1 "${SWIFT:-swift}" build -c release --sanitize=fuzzer --sanitize=address \
    -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp \
    --product sampler-fuzz --scratch-path .build-fuzz 2>&1 | grep -v "Cannot export local symbol" || true
bin=.build-fuzz/release/sampler-fuzz
[ -x "$bin" ] || { echo "fuzz: the build failed" >&2; exit 1; }
mkdir -p Fuzz/crashes
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# One target: its corpus copied, libFuzzer for FUZZ_SECONDS, one line of result.
run_target() {
    local t="$1"
    mkdir -p "$work/$t"
    cp Fuzz/corpus/"$t"/* "$work/$t/"
    local log="$work/$t.log"
    # A crash hangs in Swift's backtracer unless it is off; leaks are not what this looks for.
    if SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 FUZZ_TARGET="$t" "$bin" "$work/$t" \
        -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
        -artifact_prefix="Fuzz/crashes/$t-" -print_final_stats=1 >"$log" 2>&1; then
        local runs cov
        runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
        cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
        echo "fuzz $t: $runs executions in ${seconds} s ($cov edges), no crash"
    else
        echo "fuzz $t: FAILED (input saved in Fuzz/crashes/); last lines:" >&2
        grep -E "ERROR|SUMMARY|Fatal|panic|deadly|==" "$log" | head -20 >&2 || tail -20 "$log" >&2
        return 1
    fi
}
status=0
if [ -n "${FUZZ_PARALLEL:-}" ]; then
    # All targets at once (FUZZ_PARALLEL=1): the long run in FUZZ_SECONDS of wall-clock time
    # rather than five times that; each target gets a share of the cores, so fewer executions.
    pids=()
    for t in $targets; do run_target "$t" & pids+=($!); done
    for pid in "${pids[@]}"; do wait "$pid" || status=1; done
else
    for t in $targets; do run_target "$t" || status=1; done
fi
exit $status
