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

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

samples:
	scripts/make-samples.sh

clean:
	rm -rf .build out
