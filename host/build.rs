//! Hashes the committed guest component for the compiled-code cache's file
//! names (`src/engine.rs`), so that no process spends time on it.
//!
//! FNV-1a's multiply over eight bytes at a time, with a shift after each
//! step so that every bit of a word reaches every bit of the hash (a
//! multiply alone only carries bits upwards). It names a cache file, which
//! wasmtime validates again when loading it: it guards against a stale file,
//! not against an attacker, who could not write to the private directory.

const FNV_PRIME: u64 = 0x0100_0000_01b3;

fn main() {
    let path = "component/moonbox.wasm";
    println!("cargo:rerun-if-changed={path}");
    let bytes = std::fs::read(path).expect("the committed component is readable");
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for chunk in bytes.chunks(8) {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        h = (h ^ u64::from_le_bytes(word)).wrapping_mul(FNV_PRIME);
        h ^= h >> 29;
    }
    h = (h ^ bytes.len() as u64).wrapping_mul(FNV_PRIME);
    println!("cargo:rustc-env=MOONBOX_COMPONENT_HASH={h:016x}");
}
