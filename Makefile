# make run   installs what is missing, builds, plays the demo patch live (on a private dummy
#            JACK server when none is running)
# make test  installs what is missing and runs every test (unit and live JACK integration)
# make bench benchmarks (outside the test suite)

SWIFT ?= swift

.PHONY: all deps test-deps build run test bench samples clean sanitize tsan asan ubsan fuzz soak ci docs

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

# Three runs of the same test build: the unit tests; the allocation tests alone (their counter
# sees every thread of the process); the live JACK tests one at a time (they run in real time on
# dummy servers and should not compete for the 2 cores).
test: export SAMPLER_LINK = 1
test: test-deps
	@scripts/clear-stale-jack.sh
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --skip AllocationTests --skip IntegrationTests --skip SamplerKitTests
	$(SWIFT) test --skip-build --filter AllocationTests --no-parallel
	$(SWIFT) test --skip-build --filter 'IntegrationTests|SamplerKitTests' --no-parallel

# Sanitizers (issues 14 and 15), each in a build folder of its own. ThreadSanitizer runs the
# tests that do not open a JACK client in-process: JACK2 cancels its process thread with
# pthread_cancel when a client closes, inside a blocking call, and TSan then aborts the process
# ("thread finished with ignores enabled"). The live SamplerKit tests run without it (with the
# 8-thread stress test in `make test`).
UNIT_TESTS = SamplerCoreTests|SoundFilesTests|PatchesTests|SchedulingTests|JACKBackendTests
KIT_OFFLINE_TESTS = ManualDeviceTests|DrumKitRenderTests|MetronomeControllerTests|MetronomeOptionsTests|MetronomeRenderTests|PatchStreamingTests
# SAMPLER_SANITIZER tells the tests that count resident memory that a sanitizer's shadow memory
# and quarantine are in the count: they do not run there (they run in `make test`).
sanitize: tsan asan ubsan

tsan: deps
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build-tsan
	SAMPLER_SANITIZER=thread TSAN_OPTIONS=halt_on_error=1 $(SWIFT) test --skip-build --sanitize=thread --scratch-path .build-tsan \
	    --filter '$(UNIT_TESTS)|$(KIT_OFFLINE_TESTS)'

asan: deps
	$(SWIFT) build --build-tests --sanitize=address --scratch-path .build-asan
	SAMPLER_SANITIZER=address ASAN_OPTIONS=detect_leaks=0 $(SWIFT) test --skip-build --sanitize=address --scratch-path .build-asan \
	    --filter '$(UNIT_TESTS)|$(KIT_OFFLINE_TESTS)'

# swiftc has no -sanitize=undefined on Linux (Swift code traps on overflow and out-of-bounds
# access in every build anyway): UBSan instruments the C targets (the JACK shim, the C libraries'
# callers), and links its runtime through clang.
UBSAN_FLAGS = -Xcc -fsanitize=undefined -Xcc -fno-sanitize-recover=undefined -Xswiftc -Xclang-linker -Xswiftc -fsanitize=undefined
ubsan: deps
	$(SWIFT) build --build-tests --scratch-path .build-ubsan $(UBSAN_FLAGS)
	SAMPLER_SANITIZER=undefined UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 $(SWIFT) test --skip-build --scratch-path .build-ubsan \
	    --filter '$(UNIT_TESTS)|$(KIT_OFFLINE_TESTS)'

# libFuzzer targets for every parser (issue 15): the JSON/patch decoder, tempo maps, Hydrogen
# kits, sound decoding from memory, MIDI bytes into the engine. FUZZ_SECONDS per target
# (default 30); FUZZ_SECONDS=1800 for the long run.
fuzz: deps
	@scripts/fuzz.sh

# A long live run under randomized control (issue 15): DURATION seconds (default 120; the
# 1-hour soak is DURATION=3600). See scripts/soak.sh for what it checks.
soak: deps
	@DURATION=$(or $(DURATION),120) scripts/soak.sh

# Release-built benchmarks (issue 9): prints a table, writes benchmarks/results.json, fails if the
# render path allocated. See Benchmarks/README.md. BENCH_ARGS=--quick for a short run.
bench:
	@SWIFT="$(SWIFT)" scripts/bench.sh $(BENCH_ARGS)

samples:
	scripts/make-samples.sh

# Redraws the module graph in docs/architecture.md from Package.swift (`make test` checks it).
docs:
	@scripts/module-graph.py

clean:
	rm -rf .build out
