//! The edge of the component: the exported `session` resource, and the
//! conversions between the contract's types and the guest's own
//! (`vm::Limits`, `vm::ErrorKind`, `session::Stats`...), which stand for
//! them everywhere else. The generated code is in `bindings`.

use bindings::exports::moonbox::sandbox::lua::{Guest, GuestSession, Session as SessionHandle};
use bindings::moonbox::sandbox::types;

use crate::bindings;
use crate::check::Finding;
use crate::sandbox;
use crate::session::{self, Finished};
use crate::vm::{self, ErrorKind, Kind};

struct Component;

impl Guest for Component {
    type Session = GuestSessionImpl;
}

impl bindings::Guest for Component {
    fn wizer_initialize() {
        crate::snapshot::initialize();
    }
}

/// The exported `session` resource.
struct GuestSessionImpl(session::Session);

impl GuestSession for GuestSessionImpl {
    fn create(config: types::Config) -> Result<SessionHandle, String> {
        let config = session::Config {
            limits: limits(config.limits),
            allow: config.allow,
            modules: config
                .modules
                .into_iter()
                .map(|m| sandbox::Module {
                    name: m.name,
                    source: m.source,
                })
                .collect(),
            capabilities: config
                .capabilities
                .into_iter()
                .map(|c| vm::Capability {
                    name: c.name,
                    min_args: c.min_args,
                    max_args: c.max_args,
                })
                .collect(),
            deterministic: config.deterministic.map(|d| (d.clock, d.seed)),
        };
        let inner = session::Session::create(config)?;
        Ok(SessionHandle::new(GuestSessionImpl(inner)))
    }

    fn eval(&self, request: types::EvalRequest) -> Result<types::Success, types::Failure> {
        let inputs: Vec<session::Input> = request
            .inputs
            .into_iter()
            .map(|i| session::Input {
                name: i.name,
                value: i.value,
            })
            .collect();
        let files: Vec<(String, Vec<u8>)> = request
            .files
            .into_iter()
            .map(|f| (f.name, f.bytes))
            .collect();
        let outcome = self.0.eval(session::Request {
            code: &request.code,
            chunk: &request.chunk_name,
            inputs: &inputs,
            args: request.args.as_deref(),
            files: &files,
            stdin: request.stdin,
        });
        let stats = stats(outcome.stats);
        let files = outcome
            .files
            .into_iter()
            .map(|(name, bytes)| types::File { name, bytes })
            .collect();
        match outcome.result {
            Ok(Finished::Returned(values)) => Ok(types::Success {
                values,
                exit_code: None,
                stats,
                files,
            }),
            Ok(Finished::Exited(code)) => Ok(types::Success {
                values: "[]".to_owned(),
                exit_code: Some(code),
                stats,
                files,
            }),
            Err(error) => Err(types::Failure {
                error: to_wit_error(error, self.0.max_error_bytes()),
                stats,
                files,
            }),
        }
    }

    fn check(
        &self,
        code: Vec<u8>,
        chunk_name: String,
    ) -> Result<Vec<types::Diagnostic>, types::LuaError> {
        let diagnostics = self
            .0
            .check(&code, &chunk_name)
            .map_err(|e| to_wit_error(e, self.0.max_error_bytes()))?;
        Ok(diagnostics
            .into_iter()
            .map(|d| types::Diagnostic {
                kind: match d.kind {
                    Finding::Sandboxed => types::Finding::Sandboxed,
                    Finding::UnknownModule => types::Finding::UnknownModule,
                    Finding::UnknownCapability => types::Finding::UnknownCapability,
                    Finding::UndefinedGlobal => types::Finding::UndefinedGlobal,
                },
                name: d.name,
                message: d.message,
                chunk: chunk_name.clone(),
                line: d.line,
            })
            .collect())
    }
}

/// `e` as the boundary carries it: its message and traceback cut to
/// `max_bytes` each (`session::max_error_bytes`).
fn to_wit_error(e: session::Error, max_bytes: usize) -> types::LuaError {
    let kind = match e.kind {
        Kind::Error(kind) => kind,
        // `eval` turns an exit into a success before it gets here; anywhere
        // else (a finalizer that exits during `check`) it is a runtime error.
        Kind::Exit(_) => ErrorKind::Runtime,
    };
    types::LuaError {
        kind: error_kind(kind),
        message: session::cut_text(e.message, max_bytes),
        chunk: e.chunk,
        line: e.line,
        traceback: e.traceback.map(|t| session::cut_text(t, max_bytes)),
    }
}

fn limits(l: types::Limits) -> vm::Limits {
    let types::Limits {
        max_instructions,
        max_call_depth,
        max_string_bytes,
        max_memory_bytes,
        max_output_bytes,
        max_value_depth,
    } = l;
    vm::Limits {
        max_instructions,
        max_call_depth,
        max_string_bytes,
        max_memory_bytes,
        max_output_bytes,
        max_value_depth,
    }
}

fn stats(s: session::Stats) -> types::Stats {
    let session::Stats {
        instructions,
        peak_memory_bytes,
        capability_calls,
        output_bytes,
    } = s;
    types::Stats {
        instructions,
        peak_memory_bytes,
        capability_calls,
        output_bytes,
    }
}

fn error_kind(kind: ErrorKind) -> types::ErrorKind {
    match kind {
        ErrorKind::Syntax => types::ErrorKind::Syntax,
        ErrorKind::Runtime => types::ErrorKind::Runtime,
        ErrorKind::Sandboxed => types::ErrorKind::Sandboxed,
        ErrorKind::Capability => types::ErrorKind::Capability,
        ErrorKind::InstructionLimit => types::ErrorKind::InstructionLimit,
        ErrorKind::CallDepth => types::ErrorKind::CallDepth,
        ErrorKind::MemoryLimit => types::ErrorKind::MemoryLimit,
        ErrorKind::StringSize => types::ErrorKind::StringSize,
        ErrorKind::OutputLimit => types::ErrorKind::OutputLimit,
        ErrorKind::InvalidValue => types::ErrorKind::InvalidValue,
    }
}

bindings::export!(Component with_types_in crate::bindings);
