//! The WASI 0.2 interfaces the guest imports, and only those, linked from
//! `wasmtime-wasi`.
//!
//! Linking all of WASI (sockets, name lookup, environment, the unstable
//! parts) registers several hundred host functions, which costs a new
//! sandbox a few hundred microseconds: most of a short-lived process's
//! budget (BENCHMARKS.md). The guest imports the C library's needs: stdio
//! and terminals, exit, clocks, random, filesystem types and preopens (none
//! are granted), and `wasi:io`. A guest that imported anything else would
//! fail to link with wasmtime's error naming the interface, which the tests
//! would catch.

use wasmtime::component::{HasData, Linker, ResourceTable};
use wasmtime_wasi::WasiView;
use wasmtime_wasi::cli::{WasiCli, WasiCliView as _};
use wasmtime_wasi::clocks::{WasiClocks, WasiClocksView as _};
use wasmtime_wasi::filesystem::{WasiFilesystem, WasiFilesystemView as _};
use wasmtime_wasi::p2::bindings::{cli, clocks, filesystem, io, random};
use wasmtime_wasi::random::WasiRandom;

/// `wasi:io`'s host state: the resource table.
struct Io;

impl HasData for Io {
    type Data<'a> = &'a mut ResourceTable;
}

/// Adds the guest's WASI imports to `linker`, with async host functions.
pub(crate) fn add_to_linker<T: WasiView>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    let l = linker;
    io::error::add_to_linker::<T, Io>(l, |t| t.ctx().table)?;
    io::poll::add_to_linker::<T, Io>(l, |t| t.ctx().table)?;
    io::streams::add_to_linker::<T, Io>(l, |t| t.ctx().table)?;
    clocks::wall_clock::add_to_linker::<T, WasiClocks>(l, T::clocks)?;
    clocks::monotonic_clock::add_to_linker::<T, WasiClocks>(l, T::clocks)?;
    filesystem::types::add_to_linker::<T, WasiFilesystem>(l, T::filesystem)?;
    filesystem::preopens::add_to_linker::<T, WasiFilesystem>(l, T::filesystem)?;
    random::random::add_to_linker::<T, WasiRandom>(l, |t| t.ctx().ctx.random())?;
    random::insecure_seed::add_to_linker::<T, WasiRandom>(l, |t| t.ctx().ctx.random())?;
    cli::exit::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::stdin::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::stdout::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::stderr::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_input::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_output::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_stdin::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_stdout::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_stderr::add_to_linker::<T, WasiCli>(l, T::cli)?;
    Ok(())
}
