//! Builds the C parts of the guest:
//!
//! - **Lua 5.4.9** from the pristine sources that the pinned `lua-src` crate
//!   ships, with `lua/budget.diff` applied (the instruction budget; the diff
//!   explains itself). Nothing patched is committed: the sources are copied
//!   into `OUT_DIR` and changed there.
//! - The setjmp/longjmp runtime that Lua's error handling needs on wasm32
//!   with exceptions, and the empty `wasi-emulated-signal` archive that the
//!   WASI build of Lua expects (see c/setjmp.c).
//!
//! For a native target (the guest's unit tests) only Lua is built.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::{env, fs};

/// The `lua-src` release whose sources are patched; `Cargo.toml` pins the
/// same version.
const LUA_SRC: &str = "lua-src";
const LUA_DIR: &str = "lua-5.4.9";

fn main() {
    println!("cargo:rerun-if-changed=c");
    println!("cargo:rerun-if-changed=lua/budget.diff");
    println!("cargo:rerun-if-env-changed=MOONBOX_LUA_SRC");
    let target = env::var("TARGET").unwrap_or_default();
    let wasm = target.starts_with("wasm32");
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let sources = patched_sources(&out);
    build_lua(&sources, wasm);
    if !wasm {
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

/// Compiles the patched sources as `liblua5.4.a`, with the settings
/// `lua-src` uses for the same target.
fn build_lua(sources: &Path, wasm: bool) {
    let mut build = cc::Build::new();
    build
        .include(sources)
        .warnings(false)
        .flag_if_supported("-fno-common")
        .define("LUA_COMPAT_5_3", None)
        .define("LUA_USE_POSIX", None);
    if wasm {
        build
            .define("_WASI_EMULATED_SIGNAL", None)
            .flag("-mllvm")
            .flag("-wasm-enable-eh")
            .flag("-mllvm")
            .flag("-wasm-use-legacy-eh=false")
            .flag("-mllvm")
            .flag("-wasm-enable-sjlj");
    }
    let mut files: Vec<PathBuf> = fs::read_dir(sources)
        .expect("the patched sources were just written")
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "c"))
        // The stand-alone interpreter and compiler have their own `main`.
        .filter(|path| !path.ends_with("lua.c") && !path.ends_with("luac.c"))
        .collect();
    files.sort();
    build.files(files).compile("lua5.4");
}

/// Copies the pristine Lua sources into `out/lua` and applies the diff.
fn patched_sources(out: &Path) -> PathBuf {
    let pristine = pristine_sources();
    let dest = out.join("lua");
    let _ = fs::remove_dir_all(&dest);
    fs::create_dir_all(&dest).expect("creating OUT_DIR/lua");
    for entry in fs::read_dir(&pristine)
        .unwrap_or_else(|e| panic!("reading the Lua sources in {}: {e}", pristine.display()))
    {
        let path = entry.expect("listing the Lua sources").path();
        if path.is_file() {
            let name = path.file_name().expect("a file has a name");
            fs::copy(&path, dest.join(name)).expect("copying a Lua source");
        }
    }
    let diff = fs::read_to_string("lua/budget.diff").expect("reading lua/budget.diff");
    for (file, patch) in split_diff(&diff) {
        let path = dest.join(&file);
        let base = fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("lua/budget.diff names {file}, which is missing: {e}"));
        let parsed = diffy::Patch::from_str(&patch)
            .unwrap_or_else(|e| panic!("lua/budget.diff: the part for {file} is malformed: {e}"));
        let patched = diffy::apply(&base, &parsed).unwrap_or_else(|e| {
            panic!("lua/budget.diff does not apply to {file} of {LUA_SRC} {LUA_DIR}: {e}")
        });
        fs::write(&path, patched).expect("writing a patched Lua source");
    }
    dest
}

/// The diff's parts, one per file: everything from one `diff ` line to the
/// next. Text before the first is the diff's description.
fn split_diff(diff: &str) -> Vec<(String, String)> {
    let mut parts: Vec<(String, String)> = Vec::new();
    for line in diff.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix("diff ") {
            let file = rest
                .split_whitespace()
                .last()
                .and_then(|b| b.strip_prefix("b/"))
                .expect("a `diff` line ends with b/FILE")
                .to_string();
            parts.push((file, String::new()));
        } else if let Some((_, patch)) = parts.last_mut() {
            patch.push_str(line);
        }
    }
    parts
}

/// Where the pinned `lua-src` crate's Lua 5.4 sources are: `MOONBOX_LUA_SRC`
/// when set; else where cargo unpacked the crate (it is a build dependency,
/// so it is there before this script runs) under `CARGO_HOME`; else what
/// `cargo metadata` says, for a vendored or otherwise unusual setup.
fn pristine_sources() -> PathBuf {
    if let Some(dir) = env::var_os("MOONBOX_LUA_SRC") {
        return PathBuf::from(dir);
    }
    if let Some(dir) = unpacked_crate() {
        return dir.join(LUA_DIR);
    }
    metadata_crate().join(LUA_DIR)
}

/// The crate's directory in cargo's registry sources, if it is there.
fn unpacked_crate() -> Option<PathBuf> {
    let home = env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))?;
    let name = format!("{LUA_SRC}-{}", lua_src_version());
    let mut found: Vec<PathBuf> = fs::read_dir(home.join("registry").join("src"))
        .ok()?
        .filter_map(|index| index.ok().map(|i| i.path().join(&name)))
        .filter(|dir| dir.join(LUA_DIR).join("lvm.c").is_file())
        .collect();
    found.sort();
    found.into_iter().next()
}

/// The version of `lua-src` that Cargo.toml pins (`lua-src = "=X"`).
fn lua_src_version() -> String {
    let manifest = fs::read_to_string("Cargo.toml").expect("reading the guest's Cargo.toml");
    manifest
        .lines()
        .find_map(|line| line.strip_prefix("lua-src = \"="))
        .and_then(|rest| rest.split('"').next())
        .expect("Cargo.toml pins lua-src as `lua-src = \"=VERSION\"`")
        .to_owned()
}

/// The crate's directory as `cargo metadata` reports it (offline: cargo has
/// fetched the crate to build this script).
fn metadata_crate() -> PathBuf {
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest =
        Path::new(&env::var("CARGO_MANIFEST_DIR").expect("cargo sets it")).join("Cargo.toml");
    let target = env::var("TARGET").expect("cargo sets TARGET");
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--offline", "--locked"])
        .args(["--filter-platform", &target, "--manifest-path"])
        .arg(&manifest)
        .output()
        .expect("running cargo metadata to find the lua-src crate");
    assert!(
        output.status.success(),
        "cannot find the lua-src sources (set MOONBOX_LUA_SRC to its lua-5.4.9 directory): cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON");
    let manifest_path = metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == LUA_SRC)
        .and_then(|p| p["manifest_path"].as_str())
        .expect("lua-src is a build dependency of the guest");
    Path::new(manifest_path)
        .parent()
        .expect("a manifest is in a directory")
        .to_path_buf()
}
