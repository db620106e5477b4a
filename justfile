# Contributor tasks. The README's quickstart needs none of this;
# docs/developing.md says which to run when, and what each costs.

# Every process a recipe starts (tests, the CLI under the MCP tests, the
# benchmark's smoke run) shares one compiled-code cache inside target/, so
# the guest is compiled once per build of the crate, never into a user's
# cache. (.cargo/config.toml sets the same for processes cargo starts.)
export MOONBOX_CACHE_DIR := justfile_directory() / "target" / "moonbox-cache"

# List the recipes.
default:
    @just --list

# Run a Lua file in a fresh sandbox (extra flags go to `moonbox run`).
run FILE *FLAGS:
    cargo run -q -p moonbox-cli -- run {{FLAGS}} {{FILE}}

# The README's test command: host, CLI and end-to-end tests with the committed guest.
test:
    cargo test

# The fast subset before a commit: formatting, clippy and the README's tests.
check: contract-check fmt-check clippy test

# Every binary and test executable of the workspace, with the one feature
# set all recipes share (`cargo test` resolves it; a `cargo build -p` of a
# single crate would resolve another and build its dependencies again).
build:
    cargo test -q --workspace --no-run

# Rebuild the guest component into host/component/moonbox.wasm.
guest:
    guest/build.sh

# Fail if the committed component differs from a fresh build.
guest-check:
    guest/build.sh --check

# Rewrite every host's copy of the contract's rules (error kinds, limits,
# shared constants) from wit/contract.toml.
contract:
    python3 wit/contract.py

# Fail if any copy differs from wit/contract.toml or the WIT disagrees with
# it; then show that the check catches differences planted in each kind of copy.
contract-check:
    python3 wit/contract.py --check
    python3 -m unittest -q wit/test_contract.py

# The guest's unit tests, natively.
guest-test:
    cd guest && cargo test --target x86_64-unknown-linux-gnu

# Formatting and clippy.
lint: fmt-check clippy

# Check formatting: the workspace (fuzz included), the guest and the wasmtime CLI host's crates.
fmt-check:
    cargo fmt --all --check
    cd guest && cargo fmt --check
    cd runtimes/wasmtime-cli/caps && cargo fmt --check
    cd runtimes/wasmtime-cli/driver && cargo fmt --check
    cd runtimes/wasmtime-cli/compose && cargo fmt --check

# Clippy with warnings denied, on the crates fmt-check checks.
clippy: clippy-guest clippy-runtimes
    cargo clippy --workspace --all-targets -- -D warnings

# Clippy on the guest, which `just ci` never builds through clippy (it lints
# the workspace and the wasmtime CLI host's crates as it builds them; see
# `ci`).
clippy-guest:
    cd guest && cargo clippy --release -- -D warnings

# Clippy on the wasmtime CLI host's crates (runtimes/wasmtime-cli).
clippy-runtimes:
    cd runtimes/wasmtime-cli/caps && cargo clippy --locked --release --target wasm32-wasip2 --target-dir ../target -- -D warnings
    cd runtimes/wasmtime-cli/driver && cargo clippy --locked --release --target wasm32-wasip2 --target-dir ../target -- -D warnings
    cd runtimes/wasmtime-cli/compose && cargo clippy --locked --target-dir ../target -- -D warnings

# Licences, duplicates and sources of the workspace's and guest's dependencies (deny.toml).
deny:
    cargo deny check --hide-inclusion-graph licenses bans sources
    cargo deny --manifest-path guest/Cargo.toml check --hide-inclusion-graph licenses bans sources

# The same dependencies against the RustSec advisories; fetches them from GitHub.
advisories:
    cargo deny check advisories
    cargo deny --manifest-path guest/Cargo.toml check advisories

# API docs, warnings denied, into target/doc.
doc:
    RUSTDOCFLAGS="-D warnings" cargo doc --locked --no-deps -p moonbox

# Run the examples that assert their outcome.
examples:
    cargo run -q --example agent_tool

# Package the crate, then build and run a project that depends on the package.
package-check:
    bash .ci/package-check

# Every benchmark side by side with its peers, written into BENCHMARKS.md
# with the cold-start chart (the moonbox-bench crate, release build; it
# times the moonbox binary built beside it; the peers need lua5.4, runc and
# podman, which .ci/run installs).
[doc("Every benchmark with its peers, into BENCHMARKS.md and docs/cold-start.svg.")]
bench *FLAGS:
    # 10,000 live sessions hold more memory mappings than Linux's default
    # limit of 65,530; as root, raise it for the density figure.
    if [ "$(id -u)" = 0 ] && [ "$(cat /proc/sys/vm/max_map_count)" -lt 262144 ]; then sysctl -w vm.max_map_count=262144; fi
    cargo build -q --release -p moonbox-cli -p moonbox-bench
    target/release/moonbox-bench --awfy ../shared/benchmarks/are-we-fast-yet-lua --write BENCHMARKS.md --chart docs/cold-start.svg {{FLAGS}}

# The Rust crate, the Python package and the Node package side by side:
# process start (and the interpreters' own), fresh and reused evals, a
# capability round trip (builds both packages' native code in release
# first).
bench-packages *FLAGS:
    MOONBOX_PYTHON_PROFILE=release bash packages/python/build.sh
    cd packages/node && npm ci --silent --no-audit --no-fund && MOONBOX_NODE_PROFILE=release npm run --silent build
    cargo build -q --release -p moonbox-cli -p moonbox-bench
    target/release/moonbox-bench --packages {{FLAGS}}

# The benchmark's own tests, then the benchmark with tiny sample counts:
# proves every part runs, times nothing (debug build, the workspace's
# feature set).
bench-smoke: build
    bash .ci/expect-passed 9 cargo test -q --workspace --bin moonbox-bench --test options
    target/debug/moonbox-bench --smoke --strict --awfy ../shared/benchmarks/are-we-fast-yet-lua --write target/bench-smoke/BENCHMARKS.md --chart target/bench-smoke/cold-start.svg >/dev/null
    test -s target/bench-smoke/cold-start.svg
    grep -q "geometric mean" target/bench-smoke/BENCHMARKS.md
    target/debug/moonbox-bench --serve --smoke --clients 4 | grep -q "| 200 / 0 / 0 |"
    test "$(target/debug/moonbox-bench --nats --smoke --clients 4 | grep -c '| 200 / 0 |')" = 2
    # The packages as python-package and node-package left them (built
    # here when missing).
    [ -x target/python/venv/bin/moonbox ] || bash packages/python/build.sh >/dev/null
    [ -f packages/node/moonbox.linux-x64-gnu.node ] || (cd packages/node && npm ci --silent --no-audit --no-fund && npm run --silent build)
    target/debug/moonbox-bench --packages --smoke --strict | grep -q "| capability round trip"
    @echo "bench smoke: target/bench-smoke/BENCHMARKS.md, target/bench-smoke/cold-start.svg"

# The shared case list on every host of the component: Rust, the native
# Python and Node packages, the portable hosts (wasmtime-py, jco) and, when
# installed, the wasmtime CLI (--require-all: fail rather than skip a host).
[doc("The shared case list on every host of the component (--require-all: none skipped).")]
runtimes *FLAGS:
    bash runtimes/run.sh {{FLAGS}}

# The `moonbox mcp` server driven by the official Python MCP SDK over stdio
# and streamable HTTP, code mode included (tests/mcp; a venv in
# target/mcp-venv, reused when present), against the binary `build` made.
[doc("The MCP server through the Python MCP SDK, over stdio and HTTP (tests/mcp).")]
mcp-test *FLAGS: build
    if [ ! -x target/mcp-venv/bin/python ]; then python3 -m venv target/mcp-venv; fi
    target/mcp-venv/bin/pip install --quiet --disable-pip-version-check -r tests/mcp/requirements.txt
    MOONBOX_BIN=target/debug/moonbox target/mcp-venv/bin/python -m pytest tests/mcp {{FLAGS}}

# The Python package as a user gets it: a wheel (maturin, the dev profile
# the tests' build shares) installed into a fresh virtualenv, the README's
# first example run from an empty directory, mypy --strict, then the
# package's tests against the installed wheel.
python-package:
    bash packages/python/check.sh

# The Node package as a user gets it: the addon (the dev profile), its
# tests and tsc, then an npm pack tarball installed into a fresh directory,
# where the README's first example and `npx moonbox run` run.
node-package:
    bash packages/node/check.sh

# The NATS scale-out tests: they start nats-server (Debian's nats-server
# package) on loopback, with `moonbox serve --nats` workers as processes.
# `cargo test` ignores them; this fails unless all eight ran and passed.
nats-test:
    bash .ci/expect-passed 14 cargo test --test cli -- --ignored nats::

# The same server driven by the official TypeScript SDK over stdio
# (tests/mcp-ts; its npm lock pins the SDK): the flows where that client
# differs from the Python SDK, such as when it handles progress.
[doc("The MCP server through the TypeScript MCP SDK (tests/mcp-ts).")]
mcp-ts-test: build
    cd tests/mcp-ts && npm ci --no-audit --no-fund --silent
    cd tests/mcp-ts && MOONBOX_BIN=../../target/debug/moonbox node --test --test-concurrency=1

# Rewrites the transcript in docs/mcp.md from a fresh run (mcp-ts-test
# fails when it is stale).
mcp-transcript: build
    cd tests/mcp-ts && npm ci --no-audit --no-fund --silent
    cd tests/mcp-ts && MOONBOX_BIN=../../target/debug/moonbox node transcript.mjs --write

# Every CI step in order, with a timing summary (.ci/run installs the tools, then runs this).
#
# The workspace is linted as it is built, not checked apart: every step
# compiles the workspace's crates through clippy-driver with warnings denied
# (cargo's RUSTC_WORKSPACE_WRAPPER; dependencies are built by rustc as
# usual), so one build serves clippy, the tests and every later step, where
# `cargo clippy` would check the whole dependency graph once more. The
# lints and targets are those of `just clippy`: the tests' build compiles
# every library, binary, test and example of the workspace, and the
# runtimes step builds the wasmtime CLI host's crates as clippy-runtimes
# checks them. The guest (whose build unsets the wrapper, so the component
# stays the same) is linted by clippy-guest.
ci:
    RUSTC_WORKSPACE_WRAPPER="$(rustup which clippy-driver)" RUSTFLAGS="-D warnings" JUST="{{just_executable()}}" bash .ci/steps contract-check version-check figures-check guest-check fmt-check clippy-guest deny test compat libraries guest-test examples doc python-package node-package "runtimes --require-all" mcp-test mcp-ts-test fuzz-seeds nats-test bench-smoke "dist dev"

# Every release artifact (the binary, the wheel, the npm tarballs, the
# crates, the image) into dist/ with SHA256SUMS, then each installed into a
# clean place and run (release/dist.sh, release/check-dist.sh). PROFILE
# `dist` is what a release ships (about 7 minutes a build on 2 cores); CI
# runs `dist dev`, the same artifacts and checks, unoptimised.
[doc("Every release artifact into dist/, each installed and run (PROFILE dist, or dev in CI).")]
dist PROFILE="dist":
    MOONBOX_DIST_PROFILE={{PROFILE}} bash release/dist.sh

# The release binary (static, musl: release/build-binary.sh) against the
# release profile's glibc build and lua5.4 -e: size and process start,
# interleaved (builds both; the figures go in BENCHMARKS.md by hand, under
# "Release binary").
dist-bench SPAWNS="200":
    cargo build -q --release -p moonbox-cli
    cp target/release/moonbox target/moonbox-release
    cp "$(bash release/build-binary.sh dist)" target/moonbox-dist
    cargo build -q --release -p moonbox-bench
    target/release/moonbox-bench --binaries target/moonbox-release,target/moonbox-dist --spawns {{SPAWNS}}

# Check that the crates, the wheel, the npm packages and the CHANGELOG
# carry the workspace's version (release/version.py).
version-check:
    python3 release/version.py --check

# Check that the README's benchmark figures are BENCHMARKS.md's latest run
# (release/readme_figures.py; `--write` copies them after `just bench`).
figures-check:
    python3 release/readme_figures.py --check

# Set the release's version everywhere it is written (then add its
# CHANGELOG section).
version VERSION:
    python3 release/version.py --set {{VERSION}}
    cargo update -q -w

# The Python trees the build and the tests install (the wheel's venv, the
# MCP tests' venv, the release tools) against PyPI's per-release advisory
# data, with pip-audit --strict: a package it cannot look up fails the
# check. For a connected machine, beside `just advisories` (Rust) and `npm
# audit` (Node): CI's registry mirror does not serve PyPI's per-release
# JSON, so there every package would be skipped (docs/developing.md).
audit-python:
    bash release/audit-python.sh

# A million mixed evals on one sandbox; checks results and RSS growth.
soak EVALS="1000000":
    cargo run -q --release -p moonbox --example soak -- {{EVALS}}

# Fuzz one target (eval, json_boundary, capability_args, files, check,
# cli_args, serve_requests or mcp_messages) for SECONDS; needs cargo-fuzz. It starts from the target's
# committed seeds (fuzz/seeds) and keeps what it finds in fuzz/corpus.
fuzz TARGET="eval" SECONDS="60":
    mkdir -p fuzz/corpus/{{TARGET}}
    cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run --sanitizer none {{TARGET}} corpus/{{TARGET}} seeds/{{TARGET}} -- -max_total_time={{SECONDS}} -timeout=10 -rss_limit_mb=4096

# Every fuzz target on its seeds (fuzz/seeds), built as `build` builds it:
# no coverage instrumentation, no fuzzing, the targets' assertions.
fuzz-seeds: build
    bash .ci/expect-passed 9 cargo test -q --workspace --test seeds

# The library battery (tests/libraries): real pure-Lua libraries' own test
# suites under lua5.4 and inside `moonbox run`, compared; fails when a
# library's result differs from what its manifest entry expects.
libraries: build
    python3 tests/libraries/run.py --moonbox target/debug/moonbox

# The official Lua 5.4 test suite inside the sandbox, with the per-file
# report, and error messages against lua5.4 (ignored by `cargo test`; this
# fails unless all four ran and passed).
compat:
    bash .ci/expect-passed 4 cargo test --test all -- --ignored suite:: --nocapture
