#!/usr/bin/env bash
# make soak DURATION=3600: a long live run on a private dummy JACK server (asynchronous, as a
# user's would be). First the idle server's own xruns are counted (DURATION/10 s, at least 10 s,
# with only the witness connected). Then, for DURATION seconds, with the independent witness
# (sampler-capture --summary) counting what reached it:
#   - `sampler-soak` (SamplerKit): four control threads drive AudioPlayers and a PlayerNode at
#     random, the patch's sounds are reloaded every 10 s;
#   - `sampler play PATCH` with random MIDI note-ons on its midi_in (sampler-disturb --notes);
#   - `sampler metronome --keys-from-stdin` with random tempo keys (+ - and arrows) and
#     start/stop typed into it every 0.1–0.5 s.
# Reports xruns against the idle rate and against a second server over the same span whose graph
# has the same shape in light, idle clients (the servers' own counts of missed cycles, and which
# clients JACK found late, in what state), lost
# periods, RSS and descriptors of all three processes;
# SOAK_IDLE_PAIR=1 adds a second idle server exactly like the first: how far two identical idle
# servers land apart on this machine;
# SOAK_TWIN=1 adds a third server beside both whose graph runs the sampler's own programs, playing
# but not driven (no control threads, reloads or tempo keys): whether the soak's driving adds
# missed cycles to what clients doing the same work per cycle suffer on this machine;
# fails on growth: RSS over MAX_RSS_GROWTH_KB (default 1024), descriptors, a JACK client left
# behind, a non-finite sample, a process that failed.
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${DURATION:-120}"
# Whole seconds, at least 30 (the idle measurement alone takes 10; a shorter run measures little)
# and at most a week; bash's arithmetic takes integers only.
. scripts/whole-number.sh
duration=$(whole_number soak DURATION "$duration" 30 604800 seconds) || exit 2
patch="${PATCH:-Patches/drums.json}"
max_growth="${MAX_RSS_GROWTH_KB:-1024}"
max_growth=$(whole_number soak MAX_RSS_GROWTH_KB "$max_growth" 0 999999999 kB) || exit 2
[ -f "$patch" ] || { echo "soak: PATCH=$patch: no such file" >&2; exit 2; }
swift="${SWIFT:-swift}"
# The binaries users run: release builds, as `make build` makes them (SOAK_CONFIGURATION=debug
# for the debug ones).
configuration="${SOAK_CONFIGURATION:-release}"
flags=()
[ "$configuration" = release ] && read -r -a flags <<<"$(scripts/release-flags.sh)"
for p in sampler-soak sampler-capture sampler sampler-disturb; do
    "$swift" build -c "$configuration" ${flags[@]+"${flags[@]}"} --product "$p" >/dev/null
done
bin=$("$swift" build -c "$configuration" --show-bin-path)
echo "soak: $configuration builds, $duration s"
name="sampler-soak-$$"
work=$(mktemp -d)
jackd_pid=""
control_pid=""
control_clients=""
twin_pid=""
control2_pid=""
keys_pid=""
cleanup() {
    [ -n "$keys_pid" ] && { kill "$keys_pid" 2>/dev/null || true; }
    for pid in $control_clients $jackd_pid $control_pid $control2_pid $twin_pid; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
    # SOAK_KEEP_LOGS=DIR keeps every log of the run there: both servers', each client's.
    if [ -n "${SOAK_KEEP_LOGS:-}" ]; then
        mkdir -p "$SOAK_KEEP_LOGS"
        cp "$work"/*.log "$SOAK_KEEP_LOGS"/ 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
# The servers' own lines go to FILE, each stamped with the wall-clock time (JACK names the client
# that was late at each xrun; the stamps let both servers be counted over the same span).
stamped() { while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done >"$1"; }
jackd -n "$name" -d dummy -r 48000 -p 256 > >(stamped "$work/jackd.log") 2>&1 &
jackd_pid=$!
export JACK_DEFAULT_SERVER="$name" JACK_NO_START_SERVER=1
jack_wait -w -t 10 >/dev/null 2>&1
field() { sed -n "s/.*$1=\([0-9]*\).*/\1/p"; }

idle=$(( duration / 10 )); [ "$idle" -lt 10 ] && idle=10
idle_out=$("$bin/sampler-capture" --server "$name" --ports a,b --frames $(( idle * 48000 )) --summary --no-connect --name idle)
idle_xruns=$(echo "$idle_out" | field xruns)
echo "idle server: $idle_xruns xruns in $idle s"
# The start-up is sequenced. JACK2's bug jackaudio/jack2#721: a client still opening when another
# client closes keeps a stale wake-up for the closed one's number, and JACK never again wakes the
# next client to take that number if it is downstream of the first. (Seen here: `sampler play`
# never run while sampler-disturb, opening as a jack_connect closed, fed its midi_in.) So on each
# server a client is started only when the clients downstream of it are open, and the short-lived
# clients (jack_connect) run only once every long-lived one is open. Each program of ours says so
# in its own output: wait_for_line FILE PATTERN WHAT waits (bounded) for that line.
wait_for_line() {
    for _ in $(seq 600); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
    echo "FAIL: $3 did not start within 60 s:"; tail -3 "$1"; exit 1
}
# A second server beside it over the same span, with its own witness: the xruns the
# machine itself causes while the soak runs (what else runs on it changes between the idle
# measurement above and the run).
# start_idle_server SERVER LOG: the idle server and its witness (LOG-jackd.log, LOG.log); sets
# idle_server_pid and idle_witness_pid, adds its clients to control_clients.
start_idle_server() {
    jackd -n "$1" -d dummy -r 48000 -p 256 > >(stamped "$work/$2-jackd.log") 2>&1 &
    idle_server_pid=$!
    JACK_DEFAULT_SERVER="$1" jack_wait -w -t 10 >/dev/null 2>&1
    "$bin/sampler-capture" --server "$1" --ports a,b --frames $(( (duration - 2) * 48000 )) --summary --no-connect --name ctl >"$work/$2.log" &
    idle_witness_pid=$!
    wait_for_line "$work/$2.log" '^ready' "the idle server's witness ($2)"
    # Its graph has the soak's shape, in light clients of JACK's own examples that share no code
    # with the engine: a MIDI sequencer into a synth (sampler-disturb --notes into `sampler play`)
    # and two clicks (sampler-soak, the metronome), all three into the witness. A late wake-up has
    # as many clients to hit on either server. (They print nothing when open: the synth is started
    # before the sequencer upstream of it, and no short-lived client runs on this server before
    # they are open.)
    JACK_DEFAULT_SERVER="$1" jack_midisine >/dev/null 2>&1 &
    control_clients="$control_clients $!"
    JACK_DEFAULT_SERVER="$1" jack_midiseq ctlnotes 800 0 60 400 >/dev/null 2>&1 &
    control_clients="$control_clients $!"
    for c in ctlkit ctlclick; do
        JACK_DEFAULT_SERVER="$1" jack_metro -n "$c" -b 120 >/dev/null 2>&1 &
        control_clients="$control_clients $!"
    done
}
control="sampler-soak-control-$$"
start_idle_server "$control" control
control_pid=$idle_server_pid
control_witness_pid=$idle_witness_pid
# SOAK_IDLE_PAIR=1: a second idle server exactly like the first, beside it over the same span.
# Two servers carrying the same light graph on the same machine miss different numbers of cycles;
# how far apart they land is how finely "no more than the idle server" can be told on this machine.
control2="sampler-soak-control2-$$"
if [ -n "${SOAK_IDLE_PAIR:-}" ]; then
    start_idle_server "$control2" control2
    control2_pid=$idle_server_pid
    control2_witness_pid=$idle_witness_pid
fi

# SOAK_TWIN=1: the third server, its graph the soak's in the sampler's own programs, undriven:
# the drum patch looping twice (in place of sampler-soak and of `sampler play`), the same random
# MIDI notes into one, the metronome at a fixed tempo, all into a witness.
twin="sampler-soak-twin-$$"
if [ -n "${SOAK_TWIN:-}" ]; then
    jackd -n "$twin" -d dummy -r 48000 -p 256 > >(stamped "$work/twin-jackd.log") 2>&1 &
    twin_pid=$!
    JACK_DEFAULT_SERVER="$twin" jack_wait -w -t 10 >/dev/null 2>&1
    JACK_DEFAULT_SERVER="$twin" "$bin/sampler-capture" --server "$twin" --ports a,b --frames $(( (duration - 2) * 48000 )) --summary --no-connect --name twin >"$work/twin.log" &
    twin_witness_pid=$!
    wait_for_line "$work/twin.log" '^ready' "the twin server's witness"
    for c in twinkit twindrums; do
        JACK_DEFAULT_SERVER="$twin" "$bin/sampler" play --patch "$patch" --loop --duration "$duration" --name "$c" --no-connect --quiet >"$work/$c.log" 2>&1 &
        control_clients="$control_clients $!"
    done
    JACK_DEFAULT_SERVER="$twin" "$bin/sampler" metronome 120 --duration "$duration" --name twinclick --no-connect </dev/null >"$work/twinclick.log" 2>&1 &
    control_clients="$control_clients $!"
    for c in twinkit twindrums twinclick; do wait_for_line "$work/$c.log" '^playing' "$c on the twin server"; done
    JACK_DEFAULT_SERVER="$twin" "$bin/sampler-disturb" --server "$twin" --to twindrums:midi_in --name twinnotes --sleep 0 --every 1000000 \
        --notes 0.3 --seconds "$duration" >"$work/twinnotes.log" 2>&1 &
    control_clients="$control_clients $!"
    wait_for_line "$work/twinnotes.log" '^ready' "twinnotes on the twin server"
fi

witness_log="$work/witness.log"
run_start=$EPOCHREALTIME
"$bin/sampler-capture" --server "$name" --ports a,b --frames $(( (duration - 2) * 48000 )) --summary --no-connect --name wit >"$witness_log" &
witness_pid=$!
wait_for_line "$witness_log" '^ready' "the witness"
"$bin/sampler-soak" --seconds "$duration" --patch "$patch" --max-rss-growth "$max_growth" --reload-log "$work/reloads.log" > >(tee "$work/sampler-soak.log") &
soak_pid=$!
# The drum patch played live, its instruments hit by random MIDI notes (about 60 a second).
"$bin/sampler" play --patch "$patch" --loop --duration "$duration" --name soakdrums --no-connect --quiet >"$work/drums.log" 2>&1 &
drums_pid=$!
# The metronome, its tempo changed at random as a user at the keys would (never below 30 bpm:
# the keys stop there by themselves).
mkfifo "$work/keys"
"$bin/sampler" metronome 120 --keys-from-stdin --duration "$duration" --name soakclick --no-connect \
    <"$work/keys" >"$work/click.log" 2>&1 &
click_pid=$!
( exec 3>"$work/keys"; keys=('+' '-' $'\e[A' $'\e[B' $'\e[C' $'\e[D' ' ')
  while :; do printf '%s' "${keys[RANDOM % ${#keys[@]}]}" >&3 || exit 0; sleep "0.$(( RANDOM % 5 + 1 ))"; done ) &
keys_pid=$!
wait_for_line "$work/sampler-soak.log" '^ready' "sampler-soak"
wait_for_line "$work/drums.log" '^playing' "sampler play"
wait_for_line "$work/click.log" '^playing' "sampler metronome"
# The notes' sender opens last: upstream of `sampler play`, it connects to its midi_in itself.
"$bin/sampler-disturb" --server "$name" --to soakdrums:midi_in --name soaknotes --sleep 0 --every 1000000 \
    --notes 0.3 --seconds "$duration" >"$work/notes.log" 2>&1 &
notes_pid=$!
wait_for_line "$work/notes.log" '^ready' "sampler-disturb (the notes)"
# connect_on SERVER SOURCE DESTINATION: retried for up to about 20 s, since either port may not be
# registered yet (a client that is still loading, a witness still starting on a slow machine).
connect_on() {
    for _ in $(seq 200); do
        JACK_DEFAULT_SERVER="$1" timeout 5 jack_connect "$2" "$3" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "FAIL: could not connect $2 to $3 on server $1"; exit 1
}
for client in soak soakdrums soakclick; do
    connect_on "$name" "$client:out_L" wit:in_0
    connect_on "$name" "$client:out_R" wit:in_1
done
connect_idle() {
    connect_on "$1" ctlnotes:out midisine:midi_in
    connect_on "$1" midisine:audio_out ctl:in_0
    connect_on "$1" ctlkit:120_bpm ctl:in_0
    connect_on "$1" ctlclick:120_bpm ctl:in_1
}
connect_idle "$control"
[ -n "${SOAK_IDLE_PAIR:-}" ] && connect_idle "$control2"
if [ -n "${SOAK_TWIN:-}" ]; then
    for c in twinkit twindrums twinclick; do
        connect_on "$twin" "$c:out_L" twin:in_0
        connect_on "$twin" "$c:out_R" twin:in_1
    done
fi
# RSS and descriptors of the two command-line processes, after the same warm-up as sampler-soak
# and again 5 s before the end.
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
fds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
warm=$(( duration / 4 )); [ "$warm" -gt 20 ] && warm=20
sleep "$warm"
declare -A rss0 fds0
for pid in $drums_pid $click_pid; do rss0[$pid]=$(rss "$pid"); fds0[$pid]=$(fds "$pid"); done
sleep $(( duration - warm - 5 ))
status=0
for pid in $drums_pid $click_pid; do
    what=$([ "$pid" = "$drums_pid" ] && echo "sampler play (MIDI notes)" || echo "sampler metronome (tempo keys)")
    r=$(rss "$pid"); f=$(fds "$pid")
    echo "$what: rss-start ${rss0[$pid]} kB, rss-end $r kB, growth $(( r - rss0[$pid] )) kB; fds ${fds0[$pid]} -> $f"
    if [ $(( r - rss0[$pid] )) -gt "$max_growth" ]; then echo "FAIL: $what: RSS grew by more than $max_growth kB"; status=1; fi
    if [ "$f" -gt "${fds0[$pid]}" ]; then echo "FAIL: $what: open file descriptors grew"; status=1; fi
done
wait "$soak_pid" || status=1
wait "$drums_pid" || { echo "FAIL: sampler play failed:"; tail -3 "$work/drums.log"; status=1; }
wait "$notes_pid" || { echo "FAIL: the MIDI note sender failed:"; tail -3 "$work/notes.log"; status=1; }
kill "$keys_pid" 2>/dev/null || true; wait "$keys_pid" 2>/dev/null || true; keys_pid=""
wait "$click_pid" || { echo "FAIL: sampler metronome failed:"; tail -3 "$work/click.log"; status=1; }
wait "$witness_pid" || status=1
wait "$control_witness_pid" || { echo "FAIL: the idle server's witness beside it failed"; status=1; }
if [ -n "${SOAK_IDLE_PAIR:-}" ]; then wait "$control2_witness_pid" || { echo "FAIL: the second idle server's witness failed"; status=1; }; fi
if [ -n "${SOAK_TWIN:-}" ]; then wait "$twin_witness_pid" || { echo "FAIL: the twin server's witness failed"; status=1; }; fi
run_end=$EPOCHREALTIME
echo "sampler play: $(grep '^played' "$work/drums.log" | tail -1)"
echo "notes sent: $(tail -1 "$work/notes.log")"
echo "sampler metronome: $(tr '\r' '\n' <"$work/click.log" | grep -E '^(played|clicked|stopped)' | tail -1)"
witness=$(grep summary "$witness_log" || true)
echo "witness: ${witness#summary }"
active_xruns=$(echo "$witness" | field xruns)
nonfinite=$(echo "$witness" | field nonfinite)
allowed=$(( 2 * idle_xruns * duration / idle + 10 ))
control_xruns=$(grep summary "$work/control.log" | field xruns)
echo "xruns: $active_xruns while playing $duration s; the idle server had $idle_xruns in $idle s before (allowed: $allowed); a second, idle server beside it had $control_xruns in the same $duration s"
# Reported, not failed on: on a shared machine the load (and with it the xrun rate) changes
# between the idle measurement and the run; what the soak fails on is growth.
if [ "${active_xruns:-0}" -gt "$allowed" ]; then echo "note: more xruns than twice the idle server's rate (+10)"; fi
# The servers' own counts: one "Process error" per cycle that missed its deadline. A client's
# count is higher where several clients were late at once: JACK2 notifies every client once per
# late client (JackEngine::CheckXRun).
# Both servers' lines over the same span, the run's (this server's log also holds the idle
# measurement before it).
logs="jackd control-jackd"; [ -n "${SOAK_TWIN:-}" ] && logs="$logs twin-jackd"
[ -n "${SOAK_IDLE_PAIR:-}" ] && logs="$logs control2-jackd"
for log in $logs; do
    awk -v t0="$run_start" -v t1="$run_end" '$1 >= t0 && $1 <= t1' "$work/$log.log" >"$work/run-$log.log"
done
cycles=$(grep -c 'Process error' "$work/run-jackd.log" || true)
control_cycles=$(grep -c 'Process error' "$work/run-control-jackd.log" || true)
echo "cycles that missed their deadline (the servers' own count): $cycles on this server, $control_cycles on the idle one beside it (a graph of the same shape: five clients)"
# Which clients the server found late at its xruns, and in what state: Triggered = woken but not
# yet run (the machine did not schedule it), Running = still working at the deadline (too slow).
late_clients() {
    sed -n 's/.*client = \([^ ]*\) was not finished, state = \([A-Za-z]*\).*/\1 \2/p' "$1" | sort | uniq -c |
        awk '{ printf "%s%s %s %s", sep, $2, $3, $1; sep = ", " } END { if (NR == 0) printf "none" }'
}
echo "late clients named by the server: $(late_clients "$work/run-jackd.log")"
echo "late clients named by the idle server beside it: $(late_clients "$work/run-control-jackd.log")"
if [ "$cycles" -le "$control_cycles" ]; then
    echo "missed cycles: not more than the idle server's ($cycles <= $control_cycles)"
else
    echo "note: more missed cycles than the idle server's ($cycles > $control_cycles)"
fi
# Whether the soak's own patch reloads (decoding, freeing: kernel work on a kernel that may not
# preempt it) line up with missed cycles: those that fell during a reload or in the 0.5 s after
# it, on each server, against the share of the run those windows cover.
during_reloads() {
    awk 'NR == FNR { start[NR] = $1; end[NR] = $2 + 0.5; n = NR; next }
         /Process error/ { for (i = 1; i <= n; i++) if ($1 >= start[i] && $1 <= end[i]) { hit++; break } }
         END { printf "%d", hit }' "$work/reloads.log" "$1"
}
if [ -s "$work/reloads.log" ]; then
    share=$(awk -v t0="$run_start" -v t1="$run_end" '{ s += $2 + 0.5 - $1 } END { printf "%.1f", 100 * s / (t1 - t0) }' "$work/reloads.log")
    echo "missed cycles during a patch reload or 0.5 s after it ($(wc -l <"$work/reloads.log") reloads, $share% of the run): $(during_reloads "$work/run-jackd.log") of $cycles on this server, $(during_reloads "$work/run-control-jackd.log") of $control_cycles on the idle one"
fi
# Which missed cycles the machine caused for both servers at once (a stall of the host or of the
# kernel wakes neither in time) and which fell on one server alone: those within 0.2 s of one on
# the other server, and the rest (what only one server's graph suffered: a stall of one vCPU
# while that graph ran, or a load only its clients feel).
near_other() {
    awk '/Process error/ { if (FILENAME == ARGV[1]) other[++n] = $1; else mine[++m] = $1 }
         END { j = 1
               for (i = 1; i <= m; i++) {
                   while (j <= n && other[j] < mine[i] - 0.2) j++
                   if (j <= n && other[j] <= mine[i] + 0.2) hit++
               }
               printf "%d", hit }' "$2" "$1"
}
both=$(near_other "$work/run-jackd.log" "$work/run-control-jackd.log")
control_both=$(near_other "$work/run-control-jackd.log" "$work/run-jackd.log")
echo "missed cycles within 0.2 s of one on the other server: $both of $cycles on this server, $control_both of $control_cycles on the idle one; alone: $(( cycles - both )) on this server, $(( control_cycles - control_both )) on the idle one"
if [ -n "${SOAK_TWIN:-}" ]; then
    twin_cycles=$(grep -c 'Process error' "$work/run-twin-jackd.log" || true)
    echo "twin server (the sampler's programs, playing, undriven): $twin_cycles missed cycles; witness: $(grep summary "$work/twin.log" | sed 's/^summary //')"
    echo "late clients named by the twin server: $(late_clients "$work/run-twin-jackd.log")"
    echo "twin's missed cycles within 0.2 s of one on the soak's server: $(near_other "$work/run-twin-jackd.log" "$work/run-jackd.log") of $twin_cycles, on the idle one: $(near_other "$work/run-twin-jackd.log" "$work/run-control-jackd.log")"
    echo "soak's missed cycles within 0.2 s of one on the twin server: $(near_other "$work/run-jackd.log" "$work/run-twin-jackd.log") of $cycles"
    if [ "$cycles" -le "$twin_cycles" ]; then
        echo "missed cycles: not more than the twin server's ($cycles <= $twin_cycles)"
    else
        echo "note: more missed cycles than the twin server's ($cycles > $twin_cycles)"
    fi
fi
if [ -n "${SOAK_IDLE_PAIR:-}" ]; then
    control2_cycles=$(grep -c 'Process error' "$work/run-control2-jackd.log" || true)
    pair_both=$(near_other "$work/run-control2-jackd.log" "$work/run-control-jackd.log")
    echo "the second idle server (the same light graph): $control2_cycles missed cycles; witness: $(grep summary "$work/control2.log" | sed 's/^summary //')"
    echo "late clients named by the second idle server: $(late_clients "$work/run-control2-jackd.log")"
    pair_rev=$(near_other "$work/run-control-jackd.log" "$work/run-control2-jackd.log")
    echo "the two idle servers: $control_cycles and $control2_cycles missed cycles; within 0.2 s of one on the other: $pair_rev of $control_cycles and $pair_both of $control2_cycles; alone: $(( control_cycles - pair_rev )) and $(( control2_cycles - pair_both ))"
    echo "alone against the first idle server: $(( cycles - both )) on the soak's server, $(( control2_cycles - pair_both )) on the second idle server"
    low=$(( control_cycles < control2_cycles ? control_cycles : control2_cycles ))
    high=$(( control_cycles > control2_cycles ? control_cycles : control2_cycles ))
    if [ "$cycles" -le "$low" ]; then
        echo "missed cycles: not more than either idle server's ($cycles <= $control_cycles, $control2_cycles)"
    elif [ "$cycles" -le "$high" ]; then
        echo "missed cycles: between the two idle servers' ($control_cycles, $cycles, $control2_cycles)"
    else
        echo "note: more missed cycles than either idle server's ($cycles > $control_cycles, $control2_cycles)"
    fi
fi
# How often, and when in seconds into the run (the log lines carry the wall-clock time).
overran=$(grep -E 'client = (soak|soakdrums|soakclick) was not finished, state = Running|client (soak|soakdrums|soakclick) finished after current callback' "$work/run-jackd.log" |
    awk -v t0="$run_start" '{ at = at sep sprintf("%.0f s", $1 - t0); sep = ", " } END { printf "%d times", NR; if (NR) printf " (at %s)", at }' || true)
echo "a sampler client still running at the deadline: $overran"
if [ "${nonfinite:-0}" -gt 0 ]; then echo "FAIL: $nonfinite non-finite samples reached the witness"; status=1; fi
if timeout 5 jack_lsp 2>/dev/null | grep -qE '^soak(drums|click|notes)?:'; then echo "FAIL: a soak JACK client was left behind"; status=1; fi
[ "$status" -eq 0 ] && echo "soak passed" || echo "soak FAILED"
exit "$status"
