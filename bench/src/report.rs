//! The Markdown report: the run's tables, the targets, and the section of
//! BENCHMARKS.md they replace.

use std::fmt::Write;
use std::path::Path;

use anyhow::{Context, Result};

use super::awfy::Speed;
use super::stats::{self, Summary};

/// Where the generated section starts and ends in BENCHMARKS.md.
pub(crate) const BEGIN: &str = "<!-- moonbox-bench: generated section, begin -->";
pub(crate) const END: &str = "<!-- moonbox-bench: generated section, end -->";

/// A row that was measured, or why it was not.
pub(crate) type Row<T> = Result<T, String>;

/// Everything one `moonbox-bench` run measured.
pub(crate) struct Report {
    pub command: String,
    pub fresh: Summary,
    pub fresh_pooling: Row<Summary>,
    /// One fresh eval taken apart, step by step: default allocator, then
    /// pooling.
    pub breakdown: [Vec<(&'static str, Summary)>; 2],
    pub session: Summary,
    /// A scalar capability's round trip, then `records.get`'s.
    pub round_trip: [Summary; 3],
    /// 20 calls to a capability that waits 50 ms: one after another,
    /// through `parallel`, and through `parallel` with room for all 20.
    pub fan_out: [Summary; 3],
    pub process: Row<Summary>,
    pub native: Row<Summary>,
    pub runc: Row<Summary>,
    pub podman: Row<Summary>,
    pub throughput_fresh: f64,
    pub throughput_pooled: f64,
    pub throughput_session: f64,
    pub workers: usize,
    pub density: Row<Vec<(usize, f64, f64)>>,
    pub awfy: Row<Vec<Speed>>,
    pub chart: Option<String>,
}

impl Report {
    /// Each part that did not run, with why.
    pub fn not_run(&self) -> Vec<String> {
        let mut missing: Vec<String> = contenders(self)
            .into_iter()
            .filter_map(|(name, row, _)| row.err().map(|why| format!("{name}: {why}")))
            .collect();
        if let Err(why) = &self.density {
            missing.push(format!("density: {why}"));
        }
        if let Err(why) = &self.awfy {
            missing.push(format!("Are-We-Fast-Yet: {why}"));
        }
        missing
    }
}

/// The cold-start contenders, fastest first, for the table and the chart.
pub(crate) fn contenders(r: &Report) -> Vec<(String, Row<Summary>, bool)> {
    vec![
        ("moonbox: reused session".into(), Ok(r.session), true),
        (
            "moonbox: fresh instance, pooling allocator".into(),
            r.fresh_pooling.clone(),
            true,
        ),
        ("moonbox: fresh instance".into(), Ok(r.fresh), true),
        (
            "moonbox: new `moonbox run` process".into(),
            r.process.clone(),
            true,
        ),
        (
            "`lua5.4 -e` process (no isolation)".into(),
            r.native.clone(),
            false,
        ),
        (
            "`runc run` container with lua5.4".into(),
            r.runc.clone(),
            false,
        ),
        (
            "`podman run` container with lua5.4".into(),
            r.podman.clone(),
            false,
        ),
    ]
}

pub(crate) fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .and_then(|v| v.split(':').nth(1))
        })
        .map_or("unknown CPU".to_owned(), |m| m.trim().to_owned());
    let mem = super::proc_kib("/proc/meminfo", "MemTotal:")
        .map_or("unknown memory".to_owned(), |kib| {
            format!("{:.0} GiB RAM", kib as f64 / 1024.0 / 1024.0)
        });
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!(
        "{model}, {} cores, {mem}, Linux {}",
        super::cores(),
        kernel.trim()
    )
}

fn tool_version(program: &str, args: &[&str]) -> String {
    std::process::Command::new(program)
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| {
            let text = if o.stdout.is_empty() {
                o.stderr
            } else {
                o.stdout
            };
            let first = String::from_utf8_lossy(&text)
                .lines()
                .next()
                .unwrap_or("")
                .to_owned();
            // `lua5.4 -v` puts its copyright after two spaces.
            first.split("  ").next().unwrap_or("").trim().to_owned()
        })
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "not installed".to_owned())
}

/// Today's date (UTC) as YYYY-MM-DD.
pub(crate) fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    civil_date((secs / 86_400) as i64)
}

/// The proleptic Gregorian date `days` after 1970-01-01.
fn civil_date(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

fn status(value: f64, target: f64, lower_is_better: bool) -> String {
    let off = if lower_is_better {
        value / target
    } else {
        target / value
    };
    if off <= 1.0 {
        "met".to_owned()
    } else {
        format!("not met: {} off", stats::ratio(off))
    }
}

/// The generated section, between [`BEGIN`] and [`END`].
pub(crate) fn markdown(r: &Report) -> String {
    let mut s = String::new();
    let commit = tool_version("git", &["rev-parse", "--short", "HEAD"]);
    let _ = writeln!(s, "{BEGIN}");
    let _ = writeln!(s, "## Latest run\n");
    let _ = writeln!(s, "- Date: {}; commit `{commit}`.", today());
    let _ = writeln!(s, "- Machine: {}.", machine());
    let _ = writeln!(
        s,
        "- Peers: {}; {}; {}.",
        tool_version("lua5.4", &["-v"]),
        tool_version("runc", &["--version"]),
        tool_version("podman", &["--version"])
    );
    let _ = writeln!(s, "- Command: `{}`\n", r.command);

    let _ = writeln!(s, "### Cold start\n");
    if let Some(chart) = &r.chart {
        let _ = writeln!(s, "![cold start, log scale]({chart})\n");
    }
    let _ = writeln!(
        s,
        "From a ready `Sandbox` (or a shell, for processes) to the result of `return 1+1`.\n"
    );
    let _ = writeln!(
        s,
        "| what | median | p99 | samples | vs fresh moonbox instance |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|");
    for (name, row, _) in contenders(r) {
        match row {
            Ok(x) => {
                let _ = writeln!(
                    s,
                    "| {name} | {} | {} | {} | {} |",
                    stats::time(x.median),
                    stats::time(x.p99),
                    x.samples,
                    stats::ratio(x.secs() / r.fresh.secs())
                );
            }
            Err(why) => {
                let _ = writeln!(s, "| {name} | not run: {why} | | | |");
            }
        }
    }

    let _ = writeln!(s, "\n### One fresh eval, step by step\n");
    let _ = writeln!(
        s,
        "A fresh session started and used once; each step's median and p99 over its own samples (they need not add up to the fresh-instance rows, which time the whole).\n"
    );
    let _ = writeln!(
        s,
        "| step | default allocator: median | p99 | pooling allocator: median | p99 |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|");
    let [plain, pooled] = &r.breakdown;
    for ((step, x), (_, y)) in plain.iter().zip(pooled) {
        let _ = writeln!(
            s,
            "| {step} | {} | {} | {} | {} |",
            stats::time(x.median),
            stats::time(x.p99),
            stats::time(y.median),
            stats::time(y.p99)
        );
    }

    let _ = writeln!(s, "\n### Throughput\n");
    let _ = writeln!(
        s,
        "`return 1+1` with one task per core ({} workers).\n",
        r.workers
    );
    let _ = writeln!(s, "| what | evals per second |");
    let _ = writeln!(s, "|---|---|");
    let _ = writeln!(s, "| fresh instance per eval | {:.0} |", r.throughput_fresh);
    let _ = writeln!(
        s,
        "| fresh instance per eval, pooling allocator | {:.0} |",
        r.throughput_pooled
    );
    let _ = writeln!(
        s,
        "| one reused session per worker | {:.0} |",
        r.throughput_session
    );

    let _ = writeln!(s, "\n### Density\n");
    let _ = writeln!(
        s,
        "Growth of the process's memory per live idle session (each session has run one eval and holds its instance and Lua state), default allocator. Every instance maps the guest's snapshot copy-on-write: RSS counts a page of it once per session that has touched it, PSS (proportional set size) once, as the machine holds it. PSS is the memory a session costs.\n"
    );
    match &r.density {
        Ok(rows) => {
            let _ = writeln!(s, "| live sessions | PSS per session | RSS per session |");
            let _ = writeln!(s, "|---|---|---|");
            for (n, rss, pss) in rows {
                let _ = writeln!(
                    s,
                    "| {n} | {} | {} |",
                    stats::bytes(*pss),
                    stats::bytes(*rss)
                );
            }
        }
        Err(why) => {
            let _ = writeln!(s, "Not run: {why}.");
        }
    }

    awfy_table(&mut s, &r.awfy);

    round_trip_table(&mut s, &r.round_trip);

    fan_out_table(&mut s, r.fan_out);

    let _ = writeln!(s, "\n### Targets\n");
    let _ = writeln!(s, "| target | this run | status |");
    let _ = writeln!(s, "|---|---|---|");
    for target in targets(r) {
        let status = match &target.measured {
            Ok((_, value)) => status(*value, target.goal, target.lower_is_better),
            Err(_) => "unknown".to_owned(),
        };
        let shown = match target.measured {
            Ok((shown, _)) | Err(shown) => shown,
        };
        let _ = writeln!(s, "| {} | {shown} | {status} |", target.wording);
    }
    let _ = writeln!(s, "\n{END}");
    s
}

/// One performance goal and what this run measured for it.
struct Target {
    wording: &'static str,
    /// The figure as shown and its value, or what to show instead.
    measured: Result<(String, f64), String>,
    goal: f64,
    lower_is_better: bool,
}

/// The performance plan's goals, in its order.
fn targets(r: &Report) -> Vec<Target> {
    let best_fresh = match &r.fresh_pooling {
        Ok(p) if p.median < r.fresh.median => *p,
        _ => r.fresh,
    };
    let not_run = || "not run".to_owned();
    let awfy = || {
        r.awfy
            .as_ref()
            .ok()
            .and_then(|rows| geomean(rows))
            .map(|g| (stats::ratio(g), g))
            .ok_or_else(not_run)
    };
    vec![
        Target {
            wording: "fresh sandbox p50 <= 20 µs",
            measured: Ok((stats::time(best_fresh.median), best_fresh.secs())),
            goal: 20e-6,
            lower_is_better: true,
        },
        Target {
            wording: ">= 1000x faster than `runc run`",
            measured: match &r.runc {
                Ok(runc) => {
                    let x = runc.secs() / best_fresh.secs();
                    Ok((stats::ratio(x), x))
                }
                Err(why) => Err(format!("not run: {why}")),
            },
            goal: 1000.0,
            lower_is_better: false,
        },
        Target {
            wording: "a `moonbox run` process <= 2x `lua5.4 -e`",
            measured: match (&r.process, &r.native) {
                (Ok(process), Ok(native)) => {
                    let x = process.secs() / native.secs();
                    Ok((stats::ratio(x), x))
                }
                (Err(why), _) | (_, Err(why)) => Err(format!("not run: {why}")),
            },
            goal: 2.0,
            lower_is_better: true,
        },
        Target {
            wording: "idle session <= 128 KiB (PSS)",
            measured: r
                .density
                .as_ref()
                .ok()
                .and_then(|d| d.last())
                .map(|(n, _, pss)| (format!("{} at {n} sessions", stats::bytes(*pss)), *pss))
                .ok_or_else(not_run),
            goal: 128.0 * 1024.0,
            lower_is_better: true,
        },
        Target {
            wording: "AWFY geometric mean <= 2.0x native",
            measured: awfy(),
            goal: 2.0,
            lower_is_better: true,
        },
        Target {
            wording: "AWFY geometric mean <= 1.3x native (the goal)",
            measured: awfy(),
            goal: 1.3,
            lower_is_better: true,
        },
        Target {
            wording: "scalar capability round trip <= 1 µs",
            measured: Ok((stats::time(r.round_trip[0].median), r.round_trip[0].secs())),
            goal: 1e-6,
            lower_is_better: true,
        },
        Target {
            wording: "`records.get` round trip <= 2 µs",
            measured: Ok((stats::time(r.round_trip[1].median), r.round_trip[1].secs())),
            goal: 2e-6,
            lower_is_better: true,
        },
    ]
}

/// A table of medians, p99s and sample counts, one row per labelled summary.
fn summary_table(s: &mut String, rows: &[(&str, &Summary)]) {
    let _ = writeln!(s, "| what | median | p99 | samples |");
    let _ = writeln!(s, "|---|---|---|---|");
    for (what, x) in rows {
        let _ = writeln!(
            s,
            "| {what} | {} | {} | {} |",
            stats::time(x.median),
            stats::time(x.p99),
            x.samples
        );
    }
}

/// The capability round-trip table: a scalar capability, then
/// `records.get` with a small reply and with a page of records.
pub(crate) fn round_trip_table(s: &mut String, [scalar, records, page]: &[Summary; 3]) {
    let _ = writeln!(s, "\n### Capability round trip\n");
    let _ = writeln!(
        s,
        "From Lua to the host and back: a loop of calls (10,000; 1,000 for the page) minus the same loop without them, per call. `count.next(n)` is a synchronous capability that takes and returns an integer; `records.get('123')` returns a small table; `records.get('page')` returns a list of {} records (about 5 KB of JSON).\n",
        crate::inproc::PAGE_RECORDS
    );
    summary_table(
        s,
        &[
            ("`count.next(n)` (scalar) round trip", scalar),
            ("`records.get('123')` (table) round trip", records),
            ("`records.get('page')` (list of records) round trip", page),
        ],
    );
}

/// The `--binaries` table: each binary's size and `moonbox run` start,
/// with its ratio to `lua5.4 -e` (the last row), measured interleaved.
pub(crate) fn binaries_table(s: &mut String, rows: &[crate::spawn::Binary]) {
    let _ = writeln!(s, "\n### Release binary: size and process start\n");
    let _ = writeln!(
        s,
        "A new process that runs `return 1+1` and exits: `moonbox run -` (the script on standard input) for each binary, `lua5.4 -e` for the interpreter, one of each in turn per round. Size is the file's.\n"
    );
    let Some(lua) = rows.last() else { return };
    let _ = writeln!(s, "| binary | size | median | p99 | vs `lua5.4 -e` |");
    let _ = writeln!(s, "|---|---:|---:|---:|---:|");
    for row in rows {
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} | {} |",
            row.path,
            crate::stats::bytes(row.bytes as f64),
            crate::stats::time(row.start.median),
            crate::stats::time(row.start.p99),
            crate::stats::ratio(row.start.secs() / lua.start.secs()),
        );
    }
}

/// The `moonbox serve` load table: the server over HTTP, on the default
/// engine and with the pooling allocator, against the library in one
/// process, the same evals at the same concurrency.
pub(crate) fn load_table(s: &mut String, load: &crate::load::Load) {
    let _ = writeln!(s, "\n### `moonbox serve` under load\n");
    let _ = writeln!(
        s,
        "{} concurrent HTTP/1.1 clients on loopback, keep-alive, each sending `POST /v1/eval` with `{}` until {} requests are answered; the server runs one eval per core at once (`--max-running {}`) and queues the rest. Then the same with `--pooling`, and the same evals through the library in this process at the same concurrency and bound. Latency is the client's: queueing included.\n",
        load.clients,
        crate::load::SCRIPT,
        load.requests,
        crate::cores()
    );
    let _ = writeln!(
        s,
        "| | p50 | p99 | throughput | answers (ok / refused / failed) | server RSS (warm → end) |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|");
    for (name, h) in [
        ("`moonbox serve`, HTTP", &load.http[0]),
        ("`moonbox serve --pooling`, HTTP", &load.http[1]),
    ] {
        let _ = writeln!(
            s,
            "| {name} | {} | {} | {:.0}/s | {} / {} / {} | {} → {} |",
            stats::time(h.latency.median),
            stats::time(h.latency.p99),
            h.throughput,
            h.ok,
            h.refused,
            h.failed,
            stats::bytes(h.rss_warm as f64),
            stats::bytes(h.rss_end as f64)
        );
    }
    let _ = writeln!(
        s,
        "| library, in process (default engine) | {} | {} | {:.0}/s | | |",
        stats::time(load.library_latency.median),
        stats::time(load.library_latency.p99),
        load.library_throughput
    );
}

/// The NATS load table: claims beside one round trip.
pub(crate) fn nats_table(s: &mut String, load: &crate::nats::NatsLoad) {
    let _ = writeln!(s, "\n### `moonbox serve --nats` under load\n");
    let _ = writeln!(
        s,
        "A `nats-server` on loopback and one worker (`moonbox serve --nats URL --pooling --max-running {}`); {} concurrent clients in this process send evals of `{}` until {} are answered, first through `RemoteSandbox` (a claim from the queue group, then the request on the worker's own subject: two round trips), then as one request on `moonbox.eval`. Latency is the client's: queueing included.\n",
        crate::cores(),
        load.clients,
        crate::load::SCRIPT,
        load.requests,
    );
    let _ = writeln!(s, "| | p50 | p99 | throughput | answers (ok / failed) |");
    let _ = writeln!(s, "|---|---|---|---|---|");
    for (name, side) in [
        ("`RemoteSandbox` (claim, then the request)", &load.rows[0]),
        ("one request on `moonbox.eval`", &load.rows[1]),
    ] {
        let _ = writeln!(
            s,
            "| {name} | {} | {} | {:.0}/s | {} / {} |",
            stats::time(side.latency.median),
            stats::time(side.latency.p99),
            side.throughput,
            side.ok,
            side.failed,
        );
    }
}

/// The Are-We-Fast-Yet table, or why it was not run.
pub(crate) fn awfy_table(s: &mut String, awfy: &Row<Vec<Speed>>) {
    let _ = writeln!(s, "\n### Execution speed: Are-We-Fast-Yet\n");
    match awfy {
        Ok(rows) => {
            let _ = writeln!(
                s,
                "Each benchmark's `inner_benchmark_loop(n)` in a session with every guest limit on, against native `lua5.4` (whole process minus a process that only loads the benchmark). Medians. `moonbox` is the default sandbox; `with fuel` runs the same work on an engine that meters fuel (deterministic mode, or an explicit fuel limit). The last two columns run native `lua5.4` with a count hook every 1,000 instructions, the stock way to count instructions: Lua then sends every instruction through its hook dispatcher, so they show what the guest's instruction budget saves and how much of the ratio is the wasm wall.\n"
            );
            let _ = writeln!(
                s,
                "| benchmark | n | moonbox | with fuel | native lua5.4 | ratio | ratio with fuel | native with count hook | moonbox vs hooked native |"
            );
            let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|");
            for x in rows {
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    x.name,
                    x.inner,
                    stats::time(x.moonbox.median),
                    stats::time(x.moonbox_fuel.median),
                    stats::time(x.native.median),
                    stats::ratio(x.ratio()),
                    stats::ratio(x.fuel_ratio()),
                    stats::time(x.native_hooked.median),
                    stats::ratio(x.hooked_ratio())
                );
            }
            let mean = |f: fn(&Speed) -> f64| {
                let ratios: Vec<f64> = rows.iter().map(f).collect();
                stats::geometric_mean(&ratios)
            };
            if let (Some(g), Some(fuel), Some(h)) = (
                geomean(rows),
                mean(Speed::fuel_ratio),
                mean(Speed::hooked_ratio),
            ) {
                let _ = writeln!(
                    s,
                    "| **geometric mean** | | | | | **{}** | **{}** | | **{}** |",
                    stats::ratio(g),
                    stats::ratio(fuel),
                    stats::ratio(h)
                );
            }
        }
        Err(why) => {
            let _ = writeln!(s, "Not run: {why}.");
        }
    }
}

/// The fan-out section: the same calls one after another and through
/// `parallel`, with the speed-up.
pub(crate) fn fan_out_table(s: &mut String, [sequential, parallel, roomy]: [Summary; 3]) {
    use super::inproc::{FAN_OUT_CALLS, FAN_OUT_WAIT};
    let _ = writeln!(s, "\n### Capability fan-out\n");
    let _ = writeln!(
        s,
        "{FAN_OUT_CALLS} calls to an async capability that waits {} ms, as a slow API would: \
         in a loop, one after another, and through `parallel(items, fn)`, which hands the host \
         the calls together: at most 16 in flight (the default `max_calls_in_flight`), then \
         with room for all {FAN_OUT_CALLS}. The three evals alternate.\n",
        FAN_OUT_WAIT.as_millis()
    );
    summary_table(
        s,
        &[
            ("one after another (a loop)", &sequential),
            ("`parallel`, 16 in flight", &parallel),
            ("`parallel`, 20 in flight", &roomy),
        ],
    );
    let speedup = |t: Summary| stats::ratio(sequential.secs() / t.secs().max(f64::MIN_POSITIVE));
    let _ = writeln!(
        s,
        "\nAt the median, `parallel` is {} faster than the loop with 16 in flight (two waves of \
         calls) and {} with 20.",
        speedup(parallel),
        speedup(roomy)
    );
}

fn geomean(rows: &[Speed]) -> Option<f64> {
    stats::geometric_mean(&rows.iter().map(Speed::ratio).collect::<Vec<_>>())
}

/// Replaces the generated section of `path` with `section`, or appends it
/// when the file has none. The rest of the file is left as it is.
pub(crate) fn write_section(path: &Path, section: &str) -> Result<()> {
    let old = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let new = splice(&old, section);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, new).with_context(|| format!("cannot write {}", path.display()))
}

fn splice(old: &str, section: &str) -> String {
    match (old.find(BEGIN), old.find(END)) {
        (Some(b), Some(e)) if b < e => {
            format!(
                "{}{}{}",
                &old[..b],
                section.trim_end(),
                &old[e + END.len()..]
            )
        }
        _ if old.is_empty() => section.to_owned(),
        _ => format!("{}\n\n{section}", old.trim_end()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_civil() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(19_723), "2024-01-01");
        assert_eq!(civil_date(11_016), "2000-02-29");
    }

    #[test]
    fn the_generated_section_is_replaced_and_the_rest_kept() {
        let old = format!("# B\n\nintro\n\n{BEGIN}\nold\n{END}\n\nafter\n");
        let new = splice(&old, &format!("{BEGIN}\nnew\n{END}\n"));
        assert_eq!(
            new,
            format!("# B\n\nintro\n\n{BEGIN}\nnew\n{END}\n\nafter\n")
        );
        let appended = splice("# B\n", &format!("{BEGIN}\nx\n{END}\n"));
        assert_eq!(appended, format!("# B\n\n{BEGIN}\nx\n{END}\n"));
    }

    #[test]
    fn targets_say_met_or_how_far_off() {
        assert_eq!(status(10.0, 20.0, true), "met");
        assert_eq!(status(40.0, 20.0, true), "not met: 2.00x off");
        assert_eq!(status(100.0, 1000.0, false), "not met: 10.0x off");
    }
}
