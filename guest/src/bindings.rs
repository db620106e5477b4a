//! The WIT bindings, the only generated code. Every module but `wit` uses
//! only what is re-exported here: the `output` import (the script's output
//! stream and the files' changes), the `capabilities` import (host
//! capability calls) and the types those imports take (`value`,
//! `log-level`, `file-change`). `wit` implements the exports
//! and converts the contract's other types at the edge.

// The contract's world plus `wizer-initialize`, which the build's
// pre-initialiser calls once (see `snapshot`). The committed component
// keeps the export (docs/wit.md says why); calling it again does nothing.
wit_bindgen::generate!({
    path: "../wit",
    inline: "
        package moonbox:build;
        world snapshot {
            include moonbox:sandbox/guest@0.5.0;
            export wizer-initialize: func();
        }
    ",
    world: "moonbox:build/snapshot",
    generate_all,
});

pub(crate) use moonbox::sandbox::types::{FileChange, FileWrite, LogLevel, NamedFile, Value};
pub(crate) use moonbox::sandbox::{capabilities, output};
