#!/usr/bin/env bash
# Installs the Debian packages the build and the demo need, if any is missing; with `test`, also
# what the tests compare against (klick, Hydrogen's h2cli) and what the Link test needs (Ableton
# Link's headers, ip and unshare for its network namespace); with `link`, Ableton Link's headers
# (a Link build). Runs `apt-get update` only when something has to be installed.
set -euo pipefail
packages=(jackd2 libjack-jackd2-dev libsndfile1-dev libsamplerate0-dev liblo-dev sox)
for arg in "$@"; do
    case "$arg" in
        test) packages+=(klick hydrogen ableton-link-dev libasio-dev iproute2 util-linux python3) ;;
        link) packages+=(ableton-link-dev libasio-dev) ;;
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
if ! command -v swift >/dev/null; then
    echo "error: swift is not on PATH (Swift 6.1 or later is needed: https://www.swift.org/install/linux/)" >&2
    exit 1
fi
