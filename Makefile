# make run   installs what is missing, builds, plays the demo patch live (on a private dummy
#            JACK server when none is running)
# make test  installs what is missing and runs every test (unit and live JACK integration)
# make bench benchmarks (outside the test suite)

SWIFT ?= swift

.PHONY: all deps build run test bench samples clean

all: build

deps:
	@scripts/install-deps.sh

# Release builds are compiled for this machine's CPU (scripts/release-flags.sh; NATIVE=0 for a
# portable build).
build: deps
	$(SWIFT) build -c release --product sampler $$(scripts/release-flags.sh)

run: build
	@scripts/run-demo.sh

# Three runs of the same test build: the unit tests; the allocation tests alone (their counter
# sees every thread of the process); the live JACK tests one at a time (they run in real time on
# dummy servers and should not compete for the 2 cores).
test: deps
	@scripts/clear-stale-jack.sh
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --skip AllocationTests --skip IntegrationTests --skip SamplerKitTests
	$(SWIFT) test --skip-build --filter AllocationTests --no-parallel
	$(SWIFT) test --skip-build --filter 'IntegrationTests|SamplerKitTests' --no-parallel

# Release-built benchmarks (issue 9): prints a table, writes benchmarks/results.json, fails if the
# render path allocated. See Benchmarks/README.md. BENCH_ARGS=--quick for a short run.
bench:
	@SWIFT="$(SWIFT)" scripts/bench.sh $(BENCH_ARGS)

samples:
	scripts/make-samples.sh

clean:
	rm -rf .build out
