//! Sets the linker up for a Node addon (symbols resolved by the Node
//! process that loads it).

fn main() {
    napi_build::setup();
}
