# make run   installs what is missing, builds, plays the demo patch live (on a private dummy
#            JACK server when none is running)
# make test  installs what is missing and runs every test (unit and live JACK integration)
# make bench benchmarks (outside the test suite)

SWIFT ?= swift

.PHONY: all deps build run test samples clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	$(SWIFT) build -c release --product sampler

run: build
	@scripts/run-demo.sh

# Three runs of the same test build: the unit tests; the allocation tests alone (their counter
# sees every thread of the process); the live JACK tests one at a time (they run in real time on
# dummy servers and should not compete for the 2 cores).
test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --skip AllocationTests --skip IntegrationTests --skip SamplerKitTests
	$(SWIFT) test --skip-build --filter AllocationTests --no-parallel
	$(SWIFT) test --skip-build --filter 'IntegrationTests|SamplerKitTests' --no-parallel

samples:
	scripts/make-samples.sh

clean:
	rm -rf .build out
