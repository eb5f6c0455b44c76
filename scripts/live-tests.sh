#!/usr/bin/env bash
# The live JACK tests (`make test`'s last stage): three test processes side by side, then the
# suites that compare device frames with the wall clock, alone. Each process runs its suites one
# at a time, every test on its own private dummy server (unique name, stopped by its PID; servers
# start one at a time across processes). Most of a live test is waiting for real time to pass, so
# three fit on two cores even beside other load: the exactness tests run on synchronous (-S)
# servers, which wait for a late client instead of skipping it. What cannot share the machine is
# JACK's own estimate of time (its time-to-frame mapping follows the period wake-ups, which other
# servers' real-time threads delay by milliseconds): the suites that check frames against OSC
# timetags and Link's clock run last, on their own. LIVE_SERIAL=1 runs everything one group after
# another. Output lines carry their group's tag; the exit status is non-zero if any group failed.
#
# The test binary is run directly (as `swift test` runs it): two `swift test` processes would wait
# for each other's lock on .build.
set -uo pipefail
cd "$(dirname "$0")/.."
bin="$("${SWIFT:-swift}" build --show-bin-path)/samplerPackageTests.xctest"
[ -x "$bin" ] || { echo "live-tests: $bin is missing: build the tests first (swift build --build-tests)" >&2; exit 1; }

# Suites by name (a test's id is Module.Suite/test()/File.swift:line: match `.Suite/`).
suites() { local IFS="|"; echo "\\.($*)(/|\$)"; }
# The live modules, and HydrogenTests' song comparison (no JACK server, but a minute of h2cli
# exports and whole songs in memory: kept out of the unit stage's shared process).
live="IntegrationTests|SamplerKitTests|$(suites HydrogenSongTests)"
# Need no JACK server: run in the unit stage.
offline=(ManualDeviceTests CheckedLockTests SamplerNodeTests)
# The device timeline through faults, and the tempo grids (about 190 s); the comparisons with
# sfizz_render (no JACK server: about 60 s of renders) even the groups out.
group1=(DeviceTimelineLiveTests TempoGridCaptureTests MetronomeLiveTests SFZComparisonTests)
# The control side's heaviest runs: a million buffers, an hour of buffers, eight threads (about 200 s);
# the Hydrogen songs against h2cli (no JACK server: 65 s alone, 150 s beside two busy loops) even
# the groups out (group 3 ran 520 s with them beside two busy loops, group 2 200 s).
group2=(PlayerNodeLiveTests PlayerNodeHourTests ConcurrentUseLiveTests AudioFileBufferTests HydrogenSongTests)
# Against the wall clock and Link's clock: alone, after the others.
alone=(OSCLiveTests LinkLiveTests)
# Group 3 is every other live suite, so that a new one runs without being listed here.

# Each group's output is kept too, so that the failures can be listed again at the end (where a
# CI log shown by its tail has them).
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
run_group() {
    local tag="$1"; shift
    "$bin" --testing-library swift-testing --no-parallel "$@" 2>&1 | sed -u "s/^/[live $tag] /" | tee "$logs/$tag"
}
args1=(--filter "$(suites "${group1[@]}")")
args2=(--filter "$(suites "${group2[@]}")")
args3=(--filter "$live" --skip "$(suites "${offline[@]}" "${group1[@]}" "${group2[@]}" "${alone[@]}")")
args4=(--filter "$(suites "${alone[@]}")")

start=$(date +%s)
if [ -n "${LIVE_SERIAL:-}" ]; then
    run_group 1 "${args1[@]}"; s1=$?
    run_group 2 "${args2[@]}"; s2=$?
    run_group 3 "${args3[@]}"; s3=$?
else
    run_group 1 "${args1[@]}" & p1=$!
    run_group 2 "${args2[@]}" & p2=$!
    run_group 3 "${args3[@]}" & p3=$!
    wait "$p1"; s1=$?
    wait "$p2"; s2=$?
    wait "$p3"; s3=$?
fi
parallel=$(( $(date +%s) - start ))
run_group 4 "${args4[@]}"; s4=$?
result() { [ "$1" -eq 0 ] && echo passed || echo "FAILED (status $1)"; }
if grep -q "✘" "$logs"/* 2>/dev/null; then
    echo "live tests: what failed, again:"
    grep -h "✘" "$logs"/* | grep -v "Test run with\|^\[live [0-9]\] .\{0,12\}Suite " | cut -c1-600
fi
echo "live tests in $(( $(date +%s) - start )) s (side by side $parallel s): group 1 $(result $s1), group 2 $(result $s2), group 3 $(result $s3), alone (OSC, Link) $(result $s4)"
[ "$s1" -eq 0 ] && [ "$s2" -eq 0 ] && [ "$s3" -eq 0 ] && [ "$s4" -eq 0 ]
