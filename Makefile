# Two entry points (README): `make run` builds and runs check + select on the DSV4 suite (on the
# GPU when there is one, else the CPU); `make test` builds and runs the tests, then the CPU tests
# again under AddressSanitizer and UndefinedBehaviorSanitizer, under ThreadSanitizer, cross-built
# for aarch64 under qemu-user, and built by clang where it is installed (the warnings differ from
# gcc's, and -Werror makes them errors).
BUILD ?= build
SAN_BUILD ?= build-sanitize
TSAN_BUILD ?= build-tsan
ARM_BUILD ?= build-aarch64
CLANG_BUILD ?= build-clang
JOBS ?= $(shell nproc)

.PHONY: all deps build run test test-sanitize test-tsan test-aarch64 test-clang bench-docs clean

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
	$(MAKE) test-tsan
	$(MAKE) test-aarch64
	@if command -v clang >/dev/null 2>&1; then $(MAKE) test-clang; \
	else echo "test-clang: clang is not installed, skipped"; fi

test-sanitize: deps
	cmake -S . -B $(SAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DBF16FP32_CUDA=OFF -DBF16FP32_SANITIZE=ON
	cmake --build $(SAN_BUILD) -j $(JOBS)
	cd $(SAN_BUILD) && ctest --output-on-failure -j $(JOBS) -L cpu

test-tsan: deps
	cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DBF16FP32_CUDA=OFF -DBF16FP32_SANITIZE_THREAD=ON
	cmake --build $(TSAN_BUILD) -j $(JOBS)
	@# Address randomization off where allowed: gcc 12's ThreadSanitizer fails to map its shadow
	@# memory under the wider mmap randomization of newer kernels (vm.mmap_rnd_bits = 32).
	cd $(TSAN_BUILD) && norand=$$(setarch $$(uname -m) -R true 2>/dev/null && echo "setarch $$(uname -m) -R"); \
	$$norand ctest --output-on-failure -j $(JOBS) -L cpu

# cpu-simd's NEON kernel: the library cross-built for aarch64 and its CPU tests run under
# qemu-user (installed on Debian as root by `install-deps.sh aarch64`; skipped without them).
# test-bench-cli starts the aarch64 program itself, which qemu-user cannot chain to: left out.
test-aarch64: deps
	@if [ "$$(uname -m)" = aarch64 ]; then echo "test-aarch64: this machine is aarch64, the tests above ran natively"; exit 0; fi; \
	sh tools/install-deps.sh aarch64; \
	if command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 && command -v qemu-aarch64 >/dev/null 2>&1; then \
	  cmake -S . -B $(ARM_BUILD) -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
	    -DCMAKE_BUILD_TYPE=Release -DBF16FP32_CUDA=OFF && \
	  cmake --build $(ARM_BUILD) -j $(JOBS) && \
	  cd $(ARM_BUILD) && ctest --output-on-failure -j $(JOBS) -L cpu -E '^test-bench-cli$$'; \
	else echo "test-aarch64: aarch64-linux-gnu-gcc or qemu-aarch64 is not installed, skipped"; fi

test-clang: deps
	CC=clang cmake -S . -B $(CLANG_BUILD) -DCMAKE_BUILD_TYPE=Release -DBF16FP32_CUDA=OFF
	cmake --build $(CLANG_BUILD) -j $(JOBS)
	cd $(CLANG_BUILD) && ctest --output-on-failure -j $(JOBS) -L cpu

bench-docs: build
	sh tools/bench-docs.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(SAN_BUILD) $(TSAN_BUILD) $(ARM_BUILD) $(CLANG_BUILD)
