# make run   installs what is missing, builds, plays the demo patch live (on a private dummy
#            JACK server when none is running)
# make test  installs what is missing and runs every test (unit and live JACK integration)
# make bench benchmarks (outside the test suite)
# make format-check  lints the Swift sources against .swift-format (fails on any finding)
# make format        rewrites them in place to that style

SWIFT ?= swift

.PHONY: all deps test-deps build run test invariant bench bench-inputs bench-library-live samples clean sanitize tsan asan ubsan fuzz soak ci docs format format-check

all: build

deps:
	@scripts/install-deps.sh

test-deps:
	@scripts/install-deps.sh test

# Ableton Link (`--link`) is GPL-2.0-or-later and compiled in only with LINK=1 (`make build
# LINK=1`, `make run LINK=1`); such a binary is then under the GPL (README: License). `make test`
# always builds it in, to test it.
LINK ?= 0
ifeq ($(LINK),1)
export SAMPLER_LINK = 1
LINK_DEPS = link
endif

# Release builds are compiled for this machine's CPU (scripts/release-flags.sh; NATIVE=0 for a
# portable build).
build:
	@scripts/install-deps.sh $(LINK_DEPS)
	$(SWIFT) build -c release --product sampler $$(scripts/release-flags.sh)

run: build
	@scripts/run-demo.sh

# Three stages of the same test build: the unit tests (in parallel, with the module graph's
# check and SamplerKit's offline suites); the allocation tests alone (their counter sees every
# thread of the process); the live JACK tests, in three processes side by side, each running its
# suites one at a time on private dummy servers, then the wall-clock ones alone
# (scripts/live-tests.sh; docs/testing.md).
test: export SAMPLER_LINK = 1
test: test-deps
	@scripts/clear-stale-jack.sh
	@scripts/module-graph.py --check
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --skip AllocationTests --skip IntegrationTests --skip 'SamplerKitTests\.(?!(ManualDeviceTests|CheckedLockTests|SamplerNodeTests)(/|$$))' \
	    --skip '\.HydrogenSongTests(/|$$)'
	$(SWIFT) test --skip-build --filter AllocationTests --no-parallel
	@SWIFT="$(SWIFT)" scripts/live-tests.sh

# Sanitizers, over the tests that exercise threads (ThreadSanitizer) and
# memory (AddressSanitizer, with UndefinedBehaviorSanitizer on the C targets in the same build),
# not every pure unit test again: docs/testing.md lists what each covers. ThreadSanitizer runs
# only tests that do not open a JACK client in-process: JACK2 cancels its process thread with
# pthread_cancel when a client closes, inside a blocking call, and TSan then aborts the process
# ("thread finished with ignores enabled"). The live SamplerKit tests run without it (with the
# 8-thread stress test in `make test`).
# Threads: the SPSC ring, stream rings and the disk thread, the session's event thread on a
# manual device, the checked lock, streamed patches, the OSC server's receiving thread, sound
# recycling between control and render sides.
TSAN_TESTS = \.(SPSCRingTests|StreamRingTests|StreamReaderTests|SoundRecyclingTests|StreamedTailsTests|ManualDeviceTests|SamplerNodeTests|CheckedLockTests|PatchStreamingTests|OSCServerTests)(/|$$)
# Memory: everything that reads bytes or unsafe pointers: the engine's rings, voices and mixer,
# decoding and resampling, the JSON parser, the file gate, OSC packets through liblo, the JACK
# backend's clock, and the offline renders of kits and streamed patches.
ASAN_TESTS = ^(LockFreeTests|SamplerCoreTests|SoundFilesTests|PatchesTests|SafeFilesTests|SyncTests|JACKBackendTests)\.|\.(ManualDeviceTests|SamplerNodeTests|PatchStreamingTests|DrumKitRenderTests)(/|$$)
# SAMPLER_SANITIZER tells the tests that count resident memory that a sanitizer's shadow memory
# and quarantine are in the count: they do not run there (they run in `make test`).
sanitize: tsan asan

tsan: deps
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build-tsan
	SAMPLER_SANITIZER=thread TSAN_OPTIONS=halt_on_error=1 $(SWIFT) test --skip-build --sanitize=thread --scratch-path .build-tsan \
	    --filter '$(TSAN_TESTS)'

# swiftc has no -sanitize=undefined on Linux (Swift code traps on overflow and out-of-bounds
# access in every build anyway): UBSan instruments the C targets (the JACK shim, the C libraries'
# callers), and links its runtime through clang, in the AddressSanitizer build (one build for both).
UBSAN_FLAGS = -Xcc -fsanitize=undefined -Xcc -fno-sanitize-recover=undefined -Xswiftc -Xclang-linker -Xswiftc -fsanitize=undefined
asan: deps
	$(SWIFT) build --build-tests --sanitize=address --scratch-path .build-asan $(UBSAN_FLAGS)
	SAMPLER_SANITIZER=address INVARIANT_CASES=400 ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	    $(SWIFT) test --skip-build --sanitize=address --scratch-path .build-asan --filter '$(ASAN_TESTS)'

# UndefinedBehaviorSanitizer alone (`make asan` runs it too).
ubsan: deps
	$(SWIFT) build --build-tests --scratch-path .build-ubsan $(UBSAN_FLAGS)
	SAMPLER_SANITIZER=undefined INVARIANT_CASES=400 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 $(SWIFT) test --skip-build --scratch-path .build-ubsan \
	    --filter '$(ASAN_TESTS)'

# libFuzzer targets for every parser: the JSON/patch decoder, tempo maps, Hydrogen
# kits, sound decoding from memory, MIDI bytes into the engine. FUZZ_SECONDS per target
# (default 30); FUZZ_SECONDS=1800 for the long run.
fuzz: deps
	@scripts/fuzz.sh

# The randomized device-timeline test over many more seeded cases than `make test`'s
# 2,000: INVARIANT_CASES (default 50,000; about 5 minutes). A failure names its seed;
# INVARIANT_SEED=N runs that case alone and prints its program.
invariant: deps
	SAMPLER_LINK=1 $(SWIFT) build --build-tests
	INVARIANT_CASES=$(or $(INVARIANT_CASES),50000) $(SWIFT) test --skip-build --filter 'TimelineInvariantTests'

# A long live run under randomized control: DURATION seconds (default 120; the
# 1-hour soak is DURATION=3600). See scripts/soak.sh for what it checks.
soak: deps
	@DURATION=$(or $(DURATION),120) scripts/soak.sh

# Release-built benchmarks: prints a table, writes benchmarks/results.json, fails if the
# render path allocated. See Benchmarks/README.md. BENCH_ARGS=--quick for a short run.
bench:
	@SWIFT="$(SWIFT)" scripts/bench.sh $(BENCH_ARGS)

# The release sampler against large and hostile SFZ files (scripts/input-bench.py): seconds and
# peak memory per input, against docs/bad-input.md's bar.
bench-inputs:
	@scripts/install-deps.sh bench
	@$(SWIFT) build -c release --product sampler $$(scripts/release-flags.sh)
	@scripts/input-bench.py "$$($(SWIFT) build -c release --show-bin-path $$(scripts/release-flags.sh))/sampler"

# The 1,408-file streamed library played live for DURATION seconds (default 60) beside two busy loops:
# tails read late, the most voices at once, and how many voices a core streams.
bench-library-live: deps
	@scripts/library-live-bench.sh $(or $(DURATION),60)

samples:
	scripts/make-samples.sh

# Redraws the module graph in docs/architecture.md from Package.swift (`make test` checks it).
docs:
	@scripts/module-graph.py

# The code style, in .swift-format (swift-format ships with the Swift toolchain): 4-space indent,
# lines up to 140 columns, existing line breaks kept. `make format` rewrites the Swift files of
# these folders in place; `make format-check` only lints them and fails on any finding
# (docs/testing.md: Code style).
FORMAT_PATHS = Sources Tests Tools Benchmarks Examples
format:
	$(SWIFT) format --in-place --recursive --parallel --configuration .swift-format $(FORMAT_PATHS)

format-check:
	$(SWIFT) format lint --strict --recursive --parallel --configuration .swift-format $(FORMAT_PATHS)

clean:
	rm -rf .build out
