#!/bin/sh
# Installs what the build needs when it is missing (Debian, as root): cmake and a C compiler;
# gnuplot and oneDNN for the benchmark's plot and CPU baseline. The CUDA toolkit is optional:
# without nvcc the library builds its CPU backends only. With the argument `aarch64`: the cross
# compiler and qemu-user that `make test-aarch64` uses instead (optional too).
set -e
missing=""
if [ "${1:-}" = aarch64 ]; then
  command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || missing="$missing gcc-aarch64-linux-gnu libc6-dev-arm64-cross"
  command -v qemu-aarch64 >/dev/null 2>&1 || missing="$missing qemu-user"
else
  command -v cmake >/dev/null 2>&1 || missing="$missing cmake"
  command -v cc >/dev/null 2>&1 || missing="$missing gcc libc6-dev"
  [ -e /usr/include/dnnl.h ] || missing="$missing libdnnl-dev"
  command -v gnuplot >/dev/null 2>&1 || missing="$missing gnuplot-nox"
fi
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: installing$missing"
  apt-get update -qq >/dev/null 2>&1 || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null 2>&1 ||
    echo "install-deps: could not install$missing (the optional ones only limit the benchmark or the tests)"
else
  echo "install-deps: please install$missing"
fi
[ "${1:-}" = aarch64 ] || { command -v cmake >/dev/null 2>&1 && command -v cc >/dev/null 2>&1; }
