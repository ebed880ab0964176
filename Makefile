# Two entry points (README): `make run` builds and runs check + select on the DSV4 suite (on the
# GPU when there is one, else the CPU); `make test` builds and runs the tests, then the CPU tests
# again under AddressSanitizer and UndefinedBehaviorSanitizer.
BUILD ?= build
SAN_BUILD ?= build-sanitize
JOBS ?= $(shell nproc)

.PHONY: all deps build run test test-sanitize bench-docs clean

all: build

deps:
	@sh tools/install-deps.sh

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/bf16fp32 info
	$(BUILD)/bf16fp32 check
	$(BUILD)/bf16fp32 select

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	$(MAKE) test-sanitize

test-sanitize: deps
	cmake -S . -B $(SAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DBF16FP32_CUDA=OFF -DBF16FP32_SANITIZE=ON
	cmake --build $(SAN_BUILD) -j $(JOBS)
	cd $(SAN_BUILD) && ctest --output-on-failure -j $(JOBS) -L cpu

bench-docs: build
	sh tools/bench-docs.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(SAN_BUILD)
