//! Figures that start a process: a new `moonbox run`, native `lua5.4`, and
//! `lua5.4` inside a runc and a podman container.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};

use super::stats::Summary;

/// Times `n` runs of a command that must exit 0, after one untimed run.
pub(crate) fn samples(n: usize, program: &str, args: &[&str], stdin: &[u8]) -> Result<Summary> {
    time_once(program, args, stdin)?;
    let times = (0..n)
        .map(|_| time_once(program, args, stdin))
        .collect::<Result<Vec<_>>>()?;
    Summary::of(times).context("no samples")
}

/// One binary's row of `--binaries`: its path, its size, and the times of
/// its `moonbox run` starts (for `lua5.4 -e`, the path is `lua5.4`).
pub(crate) struct Binary {
    pub path: String,
    pub bytes: u64,
    pub start: Summary,
}

/// Times `n` starts of `moonbox run -` (running `return 1+1`) for each
/// binary and `lua5.4 -e 'return 1+1'`, one of each in turn per round (after
/// one untimed round), so that a slower minute of a noisy machine is paid
/// by every contender. `lua5.4` comes last.
pub(crate) fn binaries(paths: &[PathBuf], n: usize) -> Result<Vec<Binary>> {
    let lua = which("lua5.4").context("lua5.4 is not installed")?;
    let mut commands: Vec<(String, Vec<&str>, &[u8])> = paths
        .iter()
        .map(|p| {
            (
                p.to_string_lossy().into_owned(),
                vec!["run", "-"],
                &b"return 1+1"[..],
            )
        })
        .collect();
    commands.push((
        lua.to_string_lossy().into_owned(),
        vec!["-e", "return 1+1"],
        &b""[..],
    ));
    let mut times: Vec<Vec<Duration>> = vec![Vec::with_capacity(n); commands.len()];
    for round in 0..=n {
        for (i, (program, args, stdin)) in commands.iter().enumerate() {
            let took = time_once(program, args, stdin)?;
            if round > 0 {
                times[i].push(took);
            }
        }
    }
    commands
        .into_iter()
        .zip(times)
        .map(|((program, _, _), times)| {
            let bytes = std::fs::metadata(&program)
                .with_context(|| format!("cannot read {program}"))?
                .len();
            let path = if program == lua.to_string_lossy() {
                "lua5.4".to_owned()
            } else {
                program
            };
            Ok(Binary {
                path,
                bytes,
                start: Summary::of(times).context("no samples")?,
            })
        })
        .collect()
}

/// Runs a command once, feeding it `stdin`, and times it to its exit,
/// which must be 0.
fn time_once(program: &str, args: &[&str], stdin: &[u8]) -> Result<Duration> {
    let started = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start {program}"))?;
    if let Some(mut pipe) = child.stdin.take() {
        std::io::Write::write_all(&mut pipe, stdin)?;
    }
    let out = child.wait_with_output()?;
    let took = started.elapsed();
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        bail!("{program} failed ({}): {}", out.status, stderr.trim());
    }
    Ok(took)
}

/// A runc bundle whose root file system holds the host's `lua5.4` and the
/// shared libraries it links, removed on drop.
pub(crate) struct Bundle {
    dir: PathBuf,
    lua: String,
}

impl Bundle {
    /// Builds the bundle in a new temporary directory.
    pub fn new() -> Result<Bundle> {
        let lua = which("lua5.4").context("lua5.4 is not installed")?;
        // /usr/bin/lua5.4 is a symlink into /etc/alternatives; the container
        // runs the file it resolves to.
        let lua = std::fs::canonicalize(&lua)?;
        let dir = std::env::temp_dir().join(format!("moonbox-bench-{}", std::process::id()));
        let rootfs = dir.join("rootfs");
        std::fs::create_dir_all(&rootfs)?;
        let bundle = Bundle {
            dir,
            lua: lua.to_string_lossy().into_owned(),
        };
        let mut files = vec![lua.clone()];
        files.extend(shared_libraries(&lua)?);
        for file in &files {
            let inside = rootfs.join(file.strip_prefix("/").unwrap_or(file));
            if let Some(parent) = inside.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::copy(file, &inside)
                .with_context(|| format!("cannot copy {}", file.display()))?;
        }
        bundle.write_config()?;
        Ok(bundle)
    }

    fn write_config(&self) -> Result<()> {
        let status = Command::new("runc")
            .args(["spec", "--bundle"])
            .arg(&self.dir)
            .status()
            .context("cannot start runc (is it installed?)")?;
        ensure!(status.success(), "runc spec failed: {status}");
        let path = self.dir.join("config.json");
        let mut spec: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
        spec["process"]["terminal"] = false.into();
        spec["process"]["args"] = serde_json::json!([self.lua, "-e", "return 1+1"]);
        spec["root"]["readonly"] = true.into();
        std::fs::write(&path, serde_json::to_vec_pretty(&spec)?)?;
        Ok(())
    }

    /// The root file system directory.
    pub fn rootfs(&self) -> PathBuf {
        self.dir.join("rootfs")
    }

    /// `runc run` of the bundle, `n` times after one untimed run. Each run
    /// needs a container id of its own.
    pub fn runc(&self, n: usize) -> Result<Summary> {
        let dir = self.dir.to_string_lossy().into_owned();
        let run = |i: usize| {
            let id = format!("moonbox-bench-{}-{i}", std::process::id());
            time_once("runc", &["run", "--bundle", &dir, &id], b"")
        };
        run(0)?;
        let times = (1..=n).map(run).collect::<Result<Vec<_>>>()?;
        Summary::of(times).context("no samples")
    }

    /// `podman run --rootfs` of the same root file system, `n` times.
    pub fn podman(&self, n: usize) -> Result<Summary> {
        let rootfs = self.rootfs().to_string_lossy().into_owned();
        samples(
            n,
            "podman",
            &[
                "--runtime",
                "runc",
                "run",
                "--rm",
                "--network=none",
                "--ulimit",
                "nofile=1024:1024",
                "--ulimit",
                "nproc=1024:1024",
                "--rootfs",
                &rootfs,
                &self.lua,
                "-e",
                "return 1+1",
            ],
            b"",
        )
    }
}

impl Drop for Bundle {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The first `name` on PATH.
pub(crate) fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    })
}

/// The shared libraries `ldd` lists for `binary`, with the loader.
fn shared_libraries(binary: &Path) -> Result<Vec<PathBuf>> {
    let out = Command::new("ldd")
        .arg(binary)
        .output()
        .context("cannot run ldd")?;
    ensure!(out.status.success(), "ldd {} failed", binary.display());
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .lines()
        .filter_map(|line| line.split_whitespace().find(|w| w.starts_with('/')))
        .map(PathBuf::from)
        .collect())
}
