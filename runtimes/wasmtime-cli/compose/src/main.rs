//! Composes components as a WAC document describes, the way `wac compose`
//! does, with the same library (`wac-parser`), so that CI needs no
//! separately installed `wac`.
//!
//! ```text
//! moonbox-cli-compose DOCUMENT.wac OUTPUT.wasm NAME=COMPONENT.wasm...
//! ```
//!
//! Every package the document instantiates must be given as
//! `NAME=PATH` (for example `moonbox:guest=host/component/moonbox.wasm`);
//! nothing is fetched from a registry. The composition is validated before
//! it is written.

use std::{fs, path::PathBuf, process::ExitCode};

use indexmap::IndexMap;
use wac_parser::Document;
use wac_types::BorrowedPackageKey;

const USAGE: &str = "usage: moonbox-cli-compose DOCUMENT.wac OUTPUT.wasm NAME=COMPONENT.wasm...";

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("moonbox-cli-compose: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Vec<String>) -> Result<(), String> {
    let [document, output, deps @ ..] = args.as_slice() else {
        return Err(USAGE.to_owned());
    };
    if deps.is_empty() {
        return Err(USAGE.to_owned());
    }
    let source =
        fs::read_to_string(document).map_err(|e| format!("cannot read {document}: {e}"))?;
    let mut packages = IndexMap::new();
    for dep in deps {
        let (name, path) = dep
            .split_once('=')
            .filter(|(name, path)| !name.is_empty() && !path.is_empty())
            .ok_or_else(|| format!("`{dep}` is not NAME=PATH\n{USAGE}"))?;
        let bytes = fs::read(path).map_err(|e| format!("cannot read {path}: {e}"))?;
        let key = BorrowedPackageKey::from_name_and_version(name, None);
        if packages.insert(key, bytes).is_some() {
            return Err(format!("package `{name}` is given twice"));
        }
    }

    let parsed = Document::parse(&source).map_err(|e| format!("{document}: {e}"))?;
    let resolution = parsed
        .resolve(packages)
        .map_err(|e| format!("{document}: {}", chain(&e)))?;
    let encoded = resolution
        .encode(Default::default())
        .map_err(|e| format!("{document}: {}", chain(&e)))?;
    let output = PathBuf::from(output);
    fs::write(&output, encoded).map_err(|e| format!("cannot write {}: {e}", output.display()))
}

/// An error with its sources, one per clause.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
