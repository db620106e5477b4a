//! Builds the setjmp/longjmp runtime that Lua's error handling needs on
//! wasm32 with exceptions, and the empty `wasi-emulated-signal` archive that
//! lua-src names on its link line. See c/setjmp.c.

fn main() {
    println!("cargo:rerun-if-changed=c");
    let target = std::env::var("TARGET").unwrap_or_default();
    if !target.starts_with("wasm32") {
        // A native `cargo check` of the guest has nothing to link.
        return;
    }
    cc::Build::new()
        .file("c/setjmp.c")
        .file("c/tag.s")
        .flag("-mexception-handling")
        .flag("-fno-lto")
        .opt_level(2)
        .compile("setjmp");
    cc::Build::new()
        .file("c/empty.c")
        .flag("-fno-lto")
        .compile("wasi-emulated-signal");
}
