#!/usr/bin/env bash
# Installs every Debian 12 package tilestream needs to build, test, run and
# benchmark. Safe to run again. `--fuzz` adds clang for the libFuzzer build,
# `--parsers` Boost and libevent for bench/http_parsers.sh.
set -euo pipefail

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
packages=(
  build-essential cmake pkg-config git ca-certificates ccache clang-format clang-tidy
  libgtest-dev libgmock-dev libbenchmark-dev
  libtomlplusplus-dev libcli11-dev libspdlog-dev libfmt-dev nlohmann-json3-dev
  libcpp-httplib-dev libpng-dev libnetfilter-queue-dev libmnl-dev
  libopenmpi-dev openmpi-bin libnuma-dev
  libsdl2-dev libglew-dev libgl-dev libgl1-mesa-dri xvfb xauth
  iproute2 nftables iptables xfsprogs e2fsprogs mount iperf3 netpbm gnuplot-nox patchelf
  gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good libgstreamer1.0-dev ffmpeg stress-ng
  prometheus chromium chromium-driver python3-selenium curl lintian
)
if [ "${1:-}" = "--fuzz" ]; then packages+=(clang libclang-rt-14-dev); fi
if [ "${1:-}" = "--parsers" ]; then packages+=(libboost-dev libevent-dev); fi

echo "install-deps: apt-get update and install ${#packages[@]} packages" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q >/dev/null
$sudo apt-get install -y -q --no-install-recommends "${packages[@]}" >/dev/null
echo "install-deps: done" >&2
