//! The `moonbox` binary: the command of the `moonbox_cli` library.

/// The static (musl) build allocates with mimalloc (version 2; Cargo.toml
/// says why not 3): musl's allocator, one lock for every thread, cost
/// `serve` about a quarter of its throughput against glibc's, and the
/// process start some of its time.
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let code = moonbox_cli::main_from(std::env::args_os());
    // Everything the command had to say is written and flushed: leave
    // without tearing down the engine and its threads, which a process
    // that is about to exit does not need.
    std::process::exit(i32::from(code))
}
