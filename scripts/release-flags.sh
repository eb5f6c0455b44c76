#!/usr/bin/env bash
# Prints the extra `swift build -c release` flags for this machine: the Swift code is compiled for
# the CPU it is built on (what `-march=native` does for C; on x86-64 this lets the mixer use AVX2
# instead of the baseline SSE2). The CPU name is the one clang picks for -march=native. Set
# NATIVE=0 for a build that runs on any x86-64 CPU (for example, to copy the binary elsewhere).
set -euo pipefail
[ "${NATIVE:-1}" = 0 ] && exit 0
# The clang of the Swift toolchain (same LLVM, so it names CPUs swiftc knows), else any clang.
clang="$(dirname "$(command -v swift 2>/dev/null || echo /nonexistent/swift)")/clang"
[ -x "$clang" ] || clang=$(command -v clang 2>/dev/null) || exit 0
cpu=$("$clang" -march=native -E -x c /dev/null -### 2>&1 | sed -n 's/.*"-target-cpu" "\([^"]*\)".*/\1/p' | head -n 1)
case "$cpu" in
    ""|x86-64|generic) exit 0 ;;
esac
flags="-Xswiftc -target-cpu -Xswiftc $cpu"
# A CPU with AVX-512 has 32 vector registers: enough to hold four voices' ramps at once, so the
# engine mixes ramped voices in groups (Engine.groupsRampedVoices; with AVX2's 16
# they would spill).
if "$clang" -march=native -dM -E -x c /dev/null 2>/dev/null | grep -q '__AVX512F__'; then
    flags="$flags -Xswiftc -DSAMPLER_WIDE_VECTORS"
fi
echo "$flags"
