#!/usr/bin/env bash
# Runs a command inside the network namespace "sampler-link" (made on first use, as root): only a
# loopback interface, with multicast on and a route for 224.0.0.0/4. Ableton Link peers started
# through this script find each other and nothing else: Link's multicast never leaves the machine.
# JACK is unaffected (its servers are reached through /dev/shm).
#
#   sudo scripts/link-local.sh sampler metronome 120 --link
#   sudo scripts/link-local.sh sampler play Patches/drums.json --link
#   sudo scripts/link-local.sh --delete      # removes the namespace
#
# Other Link programs join by the same route: `sudo ip netns exec sampler-link PROGRAM`.
set -euo pipefail
name=sampler-link
if [ "$(id -u)" -ne 0 ]; then
    echo "link-local.sh: making a network namespace needs root (run it with sudo); without root," \
         "unshare --map-current-user --net runs one shell whose children share one" >&2
    exit 1
fi
if [ "${1:-}" = --delete ]; then
    ip netns delete "$name" 2>/dev/null || true
    exit 0
fi
if [ $# -eq 0 ]; then
    echo "usage: link-local.sh COMMAND [ARGUMENTS...] | --delete" >&2
    exit 2
fi
if ! ip netns list | grep -qw "$name"; then
    ip netns add "$name"
    ip -n "$name" link set lo up
    ip -n "$name" link set lo multicast on
    ip -n "$name" route add 224.0.0.0/4 dev lo
fi
# Back to the calling user's identity when run through sudo, so that the JACK server of that user
# is the one found.
if [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then
    exec ip netns exec "$name" sudo -E -u "$SUDO_USER" -- "$@"
fi
exec ip netns exec "$name" "$@"
