#!/usr/bin/env bash
# Synthesizes the demo drum and metronome samples into Samples/ with sox.
#
# Output: 48 kHz, mono, 24-bit WAV, peak -1 dBFS. The output is deterministic: no dither (-D) and
# sox's fixed noise seed (-R), so rerunning the script reproduces the files byte for byte with the
# same sox version.
#
# Every sound starts with a sharp attack, |x| > 0.3 on frame 0, so that the engine's tests can find
# sample-exact onsets: sines start at phase 90° (synth's phase argument is a percentage of a cycle,
# so 25), and noise, whose first value is random, starts one frame late behind a one-frame impulse.
#
# Besides sox it needs only bash and awk (for arithmetic).
#
# Usage: scripts/make-samples.sh [output-directory]   (default: Samples/ next to this script's parent)
set -euo pipefail
export LC_ALL=C # decimal points in awk's output, whatever the user's locale

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-"$here/../Samples"}"
mkdir -p "$out"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

rate=48000

# Intermediate files are 32-bit float so that nothing is quantized before the final mix.
tmp() { sox -D -R -n -r "$rate" -c 1 -e floating-point -b 32 "$work/$1.wav" "${@:2}"; }

# An exponential decay envelope of `db` dB over `len` seconds, amplitude-modulated onto the previous
# synth stage: the exp waveform with its peak at 0 % of a cycle one cycle long (p2 is in units of 2 dB).
decay() { awk -v len="$1" -v db="$2" 'BEGIN { printf "synth %s exp amod %.6f 0 0 0 %.6f", len, 1 / len, db / 2 }'; }

# The phase argument (in % of a cycle) that starts an exponential sweep from f1 to f2 over `len`
# seconds at 90°. sox integrates the sweep's frequency without subtracting the value at t = 0, so the
# wave starts frac(f1 * len / ln(f2 / f1)) cycles late; subtract that from the 25 % we want.
sweep_phase() {
    awk -v f1="$1" -v f2="$2" -v len="$3" 'BEGIN {
        late = f1 * len / log(f2 / f1); late -= int(late); if (late < 0) late += 1
        ph = 25 - 100 * late; if (ph < 0) ph += 100
        printf "%.4f", ph
    }'
}

# High-passed or band-passed noise of `len` seconds, delayed by one frame and cut back to `len`.
# It is kept at a quarter of full scale because sox works in 32-bit integers: filters that overshoot
# would clip even in a float file. `final` normalizes the mix anyway.
noise() {
    local name=$1 len=$2 db=$3; shift 3
    # shellcheck disable=SC2046
    tmp "$name" synth "$len" whitenoise $(decay "$len" "$db") vol 0.25 "$@" pad 1s trim 0 "$len"
}

# A one-frame impulse of amplitude `amp` followed by silence, `len` seconds in all.
impulse() {
    local frames
    frames=$(awk -v len="$2" -v rate="$rate" 'BEGIN { printf "%d", len * rate - 1 }')
    tmp "$1" synth 1s sine 0 0 25 vol "$3" pad 0 "${frames}s"
}

# Mixes the named intermediates at unity (sox -m would otherwise divide by the input count) and writes
# the final 24-bit file normalized to -1 dBFS.
final() {
    local name=$1; shift
    local inputs=()
    for part in "$@"; do inputs+=(-v 1 "$work/$part.wav"); done
    if [ "$#" -gt 1 ]; then
        sox -D -R -m "${inputs[@]}" -r "$rate" -c 1 -e signed-integer -b 24 "$out/$name.wav" norm -1
    else
        sox -D -R "${inputs[@]}" -r "$rate" -c 1 -e signed-integer -b 24 "$out/$name.wav" norm -1
    fi
}

# Kick: a sine swept exponentially from 150 to 45 Hz, falling 60 dB over 0.4 s.
# shellcheck disable=SC2046
tmp kick synth 0.4 sine 150/45 0 "$(sweep_phase 150 45 0.4)" $(decay 0.4 60)
final kick kick

# Snare: a 180 Hz body that dies quickly, plus bright noise that rings a little longer.
# shellcheck disable=SC2046
tmp snare-tone synth 0.25 sine 180/160 0 "$(sweep_phase 180 160 0.25)" $(decay 0.25 70) vol 0.5
noise snare-noise 0.25 50 highpass 1500 lowpass 9000 vol 1.6
final snare snare-tone snare-noise

# Hi-hats: noise above 7 kHz (two biquads for a steeper slope) behind a one-frame tick.
noise hihat-closed-noise 0.06 50 highpass 7000 highpass 7000
impulse hihat-closed-tick 0.06 0.2
final hihat-closed hihat-closed-tick hihat-closed-noise

noise hihat-open-noise 0.4 40 highpass 7000 highpass 7000
impulse hihat-open-tick 0.4 0.2
final hihat-open hihat-open-tick hihat-open-noise

# Clap: three short band-passed bursts 11 ms apart, then a 0.2 s tail from the last one.
noise clap-burst 0.015 30 bandpass 1200 1.2q vol 2
noise clap-tail 0.17 40 bandpass 1200 1.2q vol 1.5
sox -D -R "$work/clap-burst.wav" "$work/clap-burst-2.wav" pad 0.011
sox -D -R "$work/clap-burst.wav" "$work/clap-burst-3.wav" pad 0.022
sox -D -R "$work/clap-tail.wav" "$work/clap-tail-delayed.wav" pad 0.03
impulse clap-tick 0.2 0.15
final clap clap-tick clap-burst clap-burst-2 clap-burst-3 clap-tail-delayed

# Metronome clicks: short sines, accent higher than the other beats.
# shellcheck disable=SC2046
tmp click-high synth 0.03 sine 2000 0 25 $(decay 0.03 60)
final click-high click-high
# shellcheck disable=SC2046
tmp click-low synth 0.03 sine 1200 0 25 $(decay 0.03 60)
final click-low click-low
