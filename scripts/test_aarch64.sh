#!/usr/bin/env bash
# The core crate on 64-bit ARM, without ARM hardware: cross-built for aarch64-unknown-linux-gnu
# and its tests run under qemu-user (user-mode emulation of an ARM CPU with NEON), so the NEON
# lanes are checked against the scalar definitions, against the split loop, and against the
# golden bits that the scalar set wrote on x86-64 (crates/trellis-core/tests/data/lanes_bits.txt
# for the Ginkgo model, lanes_bits_energies.txt for Dasgupta's cost, HCC and the generator's
# density; the lib's `exact::lanes` tests compare every energy's NEON lanes with its split loop).
# Then a type check for macOS (aarch64-apple-darwin) of the core crate and of the harness, so
# that nothing Linux-only breaks the build there.
#
# Installs what it lacks, once: Debian's qemu-user, gcc-aarch64-linux-gnu and
# libc6-dev-arm64-cross (needs root and apt-get), and the Rust targets aarch64-unknown-linux-gnu
# and aarch64-apple-darwin (rustup). Measures are printed: compile time, emulated run time.
#
# What runs under emulation (AARCH64_TESTS):
#   ci (default): every core test (unit, integration, doc) except the four slowest, listed in
#       SLOW below with their emulated times; they contain no instruction-set-specific code
#       (statistical checks of the PYDT samplers, a brute-force rank over every tree) and run
#       natively in `cargo test`. libtest's "filtered out" count shows them.
#   all: every core test (about 9.5 minutes of emulation on a 2-core machine, plus the build).
# MACOS_CHECK=0 leaves out the macOS type check.
set -euo pipefail
cd "$(dirname "$0")/.."

target=aarch64-unknown-linux-gnu
mode="${AARCH64_TESTS:-ci}"
case "$mode" in
  ci | all) ;;
  *)
    echo "AARCH64_TESTS must be ci or all (got '$mode')" >&2
    exit 2
    ;;
esac

# The four slowest core tests under emulation (seconds measured under qemu-user on 2 cores).
SLOW=(
  pydt::mcmc_tests::getting_it_right_gaussian                         # 172 s
  pydt::mcmc_tests::getting_it_right_probit                           # 115 s
  exact::rank::tests::ranks_equal_a_sort_of_every_tree                # 93 s
  pydt::mcmc_tests::without_data_the_hyper_parameters_keep_their_prior # 78 s
)

start=$SECONDS
echo "== aarch64 tools"
if ! command -v qemu-aarch64 >/dev/null 2>&1 || ! command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 \
  || [ ! -e /usr/aarch64-linux-gnu/lib/libc.so.6 ]; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "qemu-aarch64 or the aarch64 cross linker is missing, and installing them needs root and apt-get" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross >/dev/null
fi
qemu-aarch64 --version | head -n 1
aarch64-linux-gnu-gcc --version | head -n 1
rustup target add "$target"

export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu"

echo "== cross build of the core crate's tests for $target"
build_start=$SECONDS
cargo test --release -p trellis-core --target "$target" --no-run
echo "== aarch64 build took $((SECONDS - build_start)) s"

skip=()
if [ "$mode" = ci ]; then
  echo "== skipped under emulation (run natively by cargo test; AARCH64_TESTS=all runs them here):"
  for t in "${SLOW[@]}"; do
    echo "   $t"
    skip+=(--skip "$t")
  done
fi
echo "== the core crate's tests under qemu-aarch64 ($mode)"
run_start=$SECONDS
cargo test --release -p trellis-core --target "$target" -- ${skip[@]+"${skip[@]}"}
echo "== emulated tests took $((SECONDS - run_start)) s"

if [ "${MACOS_CHECK:-1}" != 0 ]; then
  echo "== macOS (aarch64-apple-darwin): cargo check of the core crate and the harness"
  if rustup target add aarch64-apple-darwin; then
    check_start=$SECONDS
    cargo check -p trellis-core --all-targets --target aarch64-apple-darwin
    # The harness's C dependencies (psm, lz4-sys, zstd-sys) need a macOS C compiler and SDK to
    # build; a check links nothing, so a stand-in that writes empty objects and archives lets
    # the check reach every Rust line (the C code itself is not checked).
    stand_in="$(mktemp -d)"
    trap 'rm -rf "$stand_in"' EXIT
    printf '%s\n' '#!/bin/sh' 'out=""; prev=""' \
      'for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done' \
      '[ -n "$out" ] && : > "$out"' 'exit 0' >"$stand_in/cc"
    printf '%s\n' '#!/bin/sh' "printf '!<arch>\\n' > \"\$2\"" 'exit 0' >"$stand_in/ar"
    chmod +x "$stand_in/cc" "$stand_in/ar"
    CC_aarch64_apple_darwin="$stand_in/cc" AR_aarch64_apple_darwin="$stand_in/ar" \
      cargo check -p trellis-lab --all-targets --target aarch64-apple-darwin
    echo "== macOS check took $((SECONDS - check_start)) s"
  else
    echo "skipped: rustup could not add the aarch64-apple-darwin target"
  fi
fi
echo "== aarch64 script total $((SECONDS - start)) s"
