//! `check`'s findings: references the sandbox will refuse, found without
//! running anything.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::bindings::types;

/// What a [`Diagnostic`] is about. The rules are in docs/wit.md (`check`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Finding {
    /// A sandboxed name the configuration does not allow back, such as
    /// `os.execute` or `io.popen`: it is nil, and calling it raises a
    /// `sandboxed` error.
    Sandboxed,
    /// `require` of a name that is neither a standard library, `json`, nor
    /// one of the sandbox's modules.
    UnknownModule,
    /// A field of a capability namespace that no capability installs, such
    /// as `records.fetch` when only `records.get` is installed.
    UnknownCapability,
    /// A global the chunk reads, never assigns, and that is nil in the
    /// session.
    UndefinedGlobal,
}

impl Finding {
    /// The name used in JSON and in the `warning[...]` text:
    /// `sandboxed`, `unknown_module`, `unknown_capability`,
    /// `undefined_global`.
    pub fn as_str(self) -> &'static str {
        match self {
            Finding::Sandboxed => "sandboxed",
            Finding::UnknownModule => "unknown_module",
            Finding::UnknownCapability => "unknown_capability",
            Finding::UndefinedGlobal => "undefined_global",
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A warning from [`Sandbox::check`](crate::Sandbox::check) or
/// [`Session::check`](crate::Session::check): a reference, found in the
/// compiled chunk without running it, that this sandbox will refuse.
///
/// Displays as `chunk:line: warning[kind]: message`:
///
/// ```
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let sandbox = moonbox::Sandbox::builder().build()?;
/// let found = sandbox.check("os.execute('ls')", "tool.lua").await?;
/// assert_eq!(found[0].kind, moonbox::Finding::Sandboxed);
/// assert_eq!(found[0].name, "os.execute");
/// assert!(found[0].to_string().starts_with("tool.lua:1: warning[sandboxed]: os.execute is sandboxed"));
/// # Ok(()) }
/// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Diagnostic {
    /// What the finding is about.
    pub kind: Finding,
    /// The name as the script wrote it: `os.execute`, `require("socket")`,
    /// `records.fetch`, `undefined_name`.
    pub name: String,
    /// A sentence a model can act on, without the `chunk:line:` prefix.
    pub message: String,
    /// The chunk the finding is in.
    pub chunk: String,
    /// The line of the reference.
    pub line: u32,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: warning[{}]: {}",
            self.chunk, self.line, self.kind, self.message
        )
    }
}

impl From<types::Diagnostic> for Diagnostic {
    fn from(d: types::Diagnostic) -> Self {
        Diagnostic {
            kind: match d.kind {
                types::Finding::Sandboxed => Finding::Sandboxed,
                types::Finding::UnknownModule => Finding::UnknownModule,
                types::Finding::UnknownCapability => Finding::UnknownCapability,
                types::Finding::UndefinedGlobal => Finding::UndefinedGlobal,
            },
            name: d.name,
            message: d.message,
            chunk: d.chunk,
            line: d.line,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_as_chunk_line_warning_kind_message() {
        let d = Diagnostic {
            kind: Finding::UnknownModule,
            name: "require(\"socket\")".to_owned(),
            message: "no such module".to_owned(),
            chunk: "a.lua".to_owned(),
            line: 3,
        };
        assert_eq!(
            d.to_string(),
            "a.lua:3: warning[unknown_module]: no such module"
        );
        let json = serde_json::to_value(&d).unwrap();
        assert_eq!(json["kind"], "unknown_module");
        assert_eq!(json["line"], 3);
    }

    #[test]
    fn serde_names_match_as_str() {
        for kind in [
            Finding::Sandboxed,
            Finding::UnknownModule,
            Finding::UnknownCapability,
            Finding::UndefinedGlobal,
        ] {
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
        }
    }
}
