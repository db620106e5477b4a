//! The moonbox guest: reference Lua 5.4 behind the `moonbox:sandbox` WIT
//! contract (wit/moonbox.wit; docs/wit.md explains it for host authors).
//!
//! Layout:
//! - `vm`: the Lua state, its allocator (heap and string limits) and per-eval
//!   counters;
//! - `limits`: the count hook (instruction and call-depth limits);
//! - `sandbox`: the standard library as scripts see it;
//! - `capability`: host capabilities as Lua functions;
//! - `json`: the Lua ↔ JSON rules;
//! - `session`: eval and check;
//! - this file: the WIT bindings and the conversions at their edge.

mod capability;
mod coroutines;
mod json;
mod limits;
mod lua;
mod sandbox;
mod session;
mod vm;

mod bindings {
    wit_bindgen::generate!({
        path: "../wit",
        world: "guest",
    });
}

use bindings::exports::moonbox::sandbox::lua::{Guest, GuestSession, Session as SessionHandle};
use bindings::moonbox::sandbox::types;

struct Component;

impl Guest for Component {
    type Session = GuestSessionImpl;

    fn check(code: String, chunk_name: String) -> Result<(), types::LuaError> {
        session::check(&code, &chunk_name).map_err(to_wit_error)
    }
}

/// The exported `session` resource.
struct GuestSessionImpl(session::Session);

impl GuestSession for GuestSessionImpl {
    fn create(config: types::Config) -> Result<SessionHandle, String> {
        let l = config.limits;
        let config = session::Config {
            limits: vm::Limits {
                max_instructions: l.max_instructions,
                max_call_depth: l.max_call_depth,
                max_string_bytes: l.max_string_bytes,
                max_memory_bytes: l.max_memory_bytes,
                max_output_bytes: l.max_output_bytes,
                max_value_depth: l.max_value_depth,
            },
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

    fn eval(&self, code: String, chunk_name: String) -> Result<types::Success, types::Failure> {
        let outcome = self.0.eval(&code, &chunk_name);
        let stats = types::Stats {
            instructions: outcome.stats.instructions,
            peak_memory_bytes: outcome.stats.peak_memory_bytes,
            capability_calls: outcome.stats.capability_calls,
        };
        match outcome.result {
            Ok(values) => Ok(types::Success {
                values,
                output: outcome.output,
                stats,
            }),
            Err(error) => Err(types::Failure {
                error: to_wit_error(error),
                output: outcome.output,
                stats,
            }),
        }
    }
}

fn to_wit_error(e: session::Error) -> types::LuaError {
    use types::ErrorKind as K;
    use vm::Kind;
    let kind = match e.kind {
        Kind::Syntax => K::Syntax,
        Kind::Runtime => K::Runtime,
        Kind::Sandboxed => K::Sandboxed,
        Kind::Capability => K::Capability,
        Kind::InstructionLimit => K::InstructionLimit,
        Kind::CallDepth => K::CallDepth,
        Kind::MemoryLimit => K::MemoryLimit,
        Kind::StringSize => K::StringSize,
        Kind::OutputLimit => K::OutputLimit,
        Kind::InvalidValue => K::InvalidValue,
    };
    types::LuaError {
        kind,
        message: e.message,
        chunk: e.chunk,
        line: e.line,
        traceback: e.traceback,
    }
}

bindings::export!(Component with_types_in bindings);
