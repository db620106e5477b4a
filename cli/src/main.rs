//! The `moonbox` binary: the command of the `moonbox_cli` library.

fn main() {
    let code = moonbox_cli::main_from(std::env::args_os());
    // Everything the command had to say is written and flushed: leave
    // without tearing down the engine and its threads, which a process
    // that is about to exit does not need.
    std::process::exit(i32::from(code))
}
