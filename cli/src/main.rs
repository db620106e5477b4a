//! The `moonbox` binary: the command of the `moonbox_cli` library.

/// The static (musl) build allocates with mimalloc; cli/Cargo.toml says
/// why, and why version 2.
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
