#!/usr/bin/env bash
# Installs the Debian packages the build and the demo need, if any is missing; with `test`, also
# what the tests compare against (klick, Hydrogen's h2cli) and what the Link test needs (Ableton
# Link's headers, ip and unshare for its network namespace; PipeWire and its JACK library for the
# PipeWire tests); with `link`, Ableton Link's headers
# (a Link build); with `bench`, GNU time (`make bench-inputs`). Runs `apt-get update` only when something has to be installed.
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(jackd2 libjack-jackd2-dev libsndfile1-dev libsamplerate0-dev libsoxr-dev liblo-dev sox)
for arg in "$@"; do
    case "$arg" in
        test) packages+=(klick hydrogen ableton-link-dev libasio-dev iproute2 util-linux python3 python3-venv pipewire pipewire-bin pipewire-jack) ;;
        link) packages+=(ableton-link-dev libasio-dev) ;;
        bench) packages+=(time python3) ;;
    esac
done
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}"
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# With `test`: sfizz's offline renderer (PyPI's pysfizz 0.1.3, BSD-2-Clause), the reference of the
# SFZ comparison test, in a virtual environment of its own under .build/sfizz.
if [[ " $* " == *" test "* ]] && [ ! -x .build/sfizz/sfizz_render ]; then
    echo "installing: pysfizz (sfizz_render) into .build/sfizz"
    mkdir -p .build/sfizz
    python3 -m venv .build/sfizz/venv
    .build/sfizz/venv/bin/pip install -q pysfizz==0.1.3
    render=$(find .build/sfizz/venv -path '*site-packages/bin/sfizz_render' -type f | head -1)
    [ -n "$render" ] || { echo "error: pysfizz installed no sfizz_render" >&2; exit 1; }
    chmod +x "$render"
    ln -sf "$(cd "$(dirname "$render")" && pwd)/sfizz_render" .build/sfizz/sfizz_render
fi
if ! command -v swift >/dev/null; then
    echo "error: swift is not on PATH (Swift 6.1 or later is needed: https://www.swift.org/install/linux/)" >&2
    exit 1
fi
