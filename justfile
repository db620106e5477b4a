# Contributor tasks. The README's quickstart needs none of this.

# List the recipes.
default:
    @just --list

# Run a Lua file in a fresh sandbox (extra flags go to `moonbox run`).
run FILE *FLAGS:
    cargo run -q -p moonbox -- run {{FLAGS}} {{FILE}}

# The README's test command: host, CLI and end-to-end tests with the committed guest.
test:
    cargo test --workspace

# Rebuild the guest component into host/component/moonbox.wasm.
guest:
    guest/build.sh

# Fail if the committed component differs from a fresh build.
guest-check:
    guest/build.sh --check

# Formatting and clippy for the host workspace and the guest.
lint:
    cargo fmt --all --check
    cd guest && cargo fmt --check
    cargo clippy --workspace --all-targets -- -D warnings
    cd guest && cargo clippy --release -- -D warnings

# API docs, warnings denied.
doc:
    RUSTDOCFLAGS="-D warnings" cargo doc --no-deps -p moonbox

# Run the examples that assert their outcome.
examples:
    cargo run -q -p moonbox --example agent_tool

# Cold start, session and capability figures (release build).
bench *FLAGS:
    cargo run -q --release -p moonbox -- bench {{FLAGS}}

# Everything CI runs, installs included.
ci:
    bash .ci/run

# A million mixed evals on one sandbox; checks results and RSS growth.
soak EVALS="1000000":
    cargo run -q --release -p moonbox --example soak -- {{EVALS}}

# Fuzz one target (eval or json_boundary) for SECONDS; needs cargo-fuzz.
fuzz TARGET="eval" SECONDS="60":
    cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run --sanitizer none {{TARGET}} -- -max_total_time={{SECONDS}} -timeout=10 -rss_limit_mb=4096

# The official Lua 5.4 test suite inside the sandbox, with the per-file report.
compat:
    cargo test -p moonbox-tests --features suite --test suite -- --nocapture
