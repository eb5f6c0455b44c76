#!/usr/bin/env bash
# `make bench`: builds the benchmark (and the sampler, for the metronome comparison) in release
# mode, then runs it from the package root. It prints the table and writes benchmarks/results.json;
# it exits non-zero if the render path allocated. Extra arguments go to sampler-bench
# (--quick for a short smoke run, --skip-metronome).
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
SCRATCH=${SCRATCH:-.build}
scripts/install-deps.sh
flags=$(scripts/release-flags.sh)
echo "release flags: ${flags:-none (baseline CPU)}"
$SWIFT build -c release --scratch-path "$SCRATCH" --product sampler $flags
$SWIFT build -c release --scratch-path "$SCRATCH" --product sampler-bench $flags
bin=$($SWIFT build -c release --scratch-path "$SCRATCH" --show-bin-path $flags)
echo "machine:"
lscpu | head -n 15 | sed 's/^/  /'
echo "  nproc: $(nproc)"
exec "$bin/sampler-bench" --build-flags "${flags:-baseline x86-64}" "$@"
