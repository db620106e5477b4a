//! Prometheus metrics, served as text at `/metrics`.
//!
//! Every label takes its values from a fixed set (eval kinds, outcome
//! names, refusal kinds), so the number of series is bounded whatever the
//! clients send.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// The upper bounds of the latency histogram's buckets, in seconds.
const BUCKETS: [f64; 14] = [
    0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

#[derive(Default)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

impl Histogram {
    fn observe(&mut self, secs: f64) {
        for (count, bound) in self.counts.iter_mut().zip(BUCKETS) {
            if secs <= bound {
                *count += 1;
            }
        }
        self.count += 1;
        self.sum += secs;
    }
}

#[derive(Default)]
struct Tables {
    /// (kind, outcome) -> evals.
    evals: BTreeMap<(&'static str, &'static str), u64>,
    /// kind -> latency.
    latency: BTreeMap<&'static str, Histogram>,
    /// refusal kind -> requests.
    refused: BTreeMap<&'static str, u64>,
}

/// The server's counters.
#[derive(Default)]
pub(crate) struct Metrics {
    tables: Mutex<Tables>,
    fuel_used: AtomicU64,
    instructions: AtomicU64,
}

/// The gauges read at scrape time.
pub(crate) struct Gauges {
    pub(crate) sessions: usize,
    pub(crate) queued: usize,
    pub(crate) running: usize,
    pub(crate) draining: bool,
    pub(crate) connections: usize,
}

impl Metrics {
    fn tables(&self) -> std::sync::MutexGuard<'_, Tables> {
        self.tables.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts one eval that ran: `kind` is `eval` or `session`, `outcome`
    /// `ok` or an error kind.
    pub(crate) fn eval(
        &self,
        kind: &'static str,
        outcome: &'static str,
        wall: Duration,
        fuel: Option<u64>,
        instructions: Option<u64>,
    ) {
        {
            let mut tables = self.tables();
            *tables.evals.entry((kind, outcome)).or_default() += 1;
            tables
                .latency
                .entry(kind)
                .or_default()
                .observe(wall.as_secs_f64());
        }
        if let Some(fuel) = fuel {
            self.fuel_used.fetch_add(fuel, Ordering::Relaxed);
        }
        if let Some(n) = instructions {
            self.instructions.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// Counts one refused request.
    pub(crate) fn refused(&self, kind: &'static str) {
        *self.tables().refused.entry(kind).or_default() += 1;
    }

    /// The text exposition format.
    pub(crate) fn render(&self, gauges: &Gauges) -> String {
        let mut out = String::new();
        let tables = self.tables();
        let _ = writeln!(
            out,
            "# HELP moonbox_evals_total Evals that ran, by kind (eval, session) and outcome (ok or the error kind).\n# TYPE moonbox_evals_total counter"
        );
        for ((kind, outcome), n) in &tables.evals {
            let _ = writeln!(
                out,
                "moonbox_evals_total{{kind=\"{kind}\",outcome=\"{outcome}\"}} {n}"
            );
        }
        let _ = writeln!(
            out,
            "# HELP moonbox_eval_duration_seconds Wall time of an eval, session start included for a fresh eval.\n# TYPE moonbox_eval_duration_seconds histogram"
        );
        for (kind, h) in &tables.latency {
            for (count, bound) in h.counts.iter().zip(BUCKETS) {
                let _ = writeln!(
                    out,
                    "moonbox_eval_duration_seconds_bucket{{kind=\"{kind}\",le=\"{bound}\"}} {count}"
                );
            }
            let _ = writeln!(
                out,
                "moonbox_eval_duration_seconds_bucket{{kind=\"{kind}\",le=\"+Inf\"}} {}\nmoonbox_eval_duration_seconds_sum{{kind=\"{kind}\"}} {}\nmoonbox_eval_duration_seconds_count{{kind=\"{kind}\"}} {}",
                h.count, h.sum, h.count
            );
        }
        let _ = writeln!(
            out,
            "# HELP moonbox_requests_refused_total Requests refused before running, by error kind.\n# TYPE moonbox_requests_refused_total counter"
        );
        for (kind, n) in &tables.refused {
            let _ = writeln!(out, "moonbox_requests_refused_total{{kind=\"{kind}\"}} {n}");
        }
        drop(tables);
        let counters = [
            (
                "moonbox_fuel_used_total",
                "Wasmtime fuel used by evals (when the engine meters fuel).",
                self.fuel_used.load(Ordering::Relaxed),
            ),
            (
                "moonbox_instructions_total",
                "Lua instructions run by evals the guest could count.",
                self.instructions.load(Ordering::Relaxed),
            ),
        ];
        for (name, help, value) in counters {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}"
            );
        }
        let gauges = [
            ("moonbox_sessions_live", "Sessions open.", gauges.sessions),
            (
                "moonbox_queue_depth",
                "Requests waiting for a turn to run.",
                gauges.queued,
            ),
            ("moonbox_evals_running", "Evals running.", gauges.running),
            (
                "moonbox_http_connections",
                "HTTP connections open.",
                gauges.connections,
            ),
            (
                "moonbox_draining",
                "1 while the server drains before it stops.",
                usize::from(gauges.draining),
            ),
        ];
        for (name, help, value) in gauges {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}"
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_histogram_is_cumulative() {
        let metrics = Metrics::default();
        metrics.eval("eval", "ok", Duration::from_millis(3), Some(10), Some(5));
        metrics.eval("eval", "timeout", Duration::from_secs(20), None, None);
        metrics.refused("overloaded");
        let text = metrics.render(&Gauges {
            sessions: 2,
            queued: 1,
            running: 0,
            draining: false,
            connections: 3,
        });
        assert!(text.contains("moonbox_evals_total{kind=\"eval\",outcome=\"ok\"} 1"));
        assert!(text.contains("moonbox_evals_total{kind=\"eval\",outcome=\"timeout\"} 1"));
        assert!(
            text.contains("moonbox_eval_duration_seconds_bucket{kind=\"eval\",le=\"0.0025\"} 0")
        );
        assert!(
            text.contains("moonbox_eval_duration_seconds_bucket{kind=\"eval\",le=\"0.005\"} 1")
        );
        assert!(text.contains("moonbox_eval_duration_seconds_bucket{kind=\"eval\",le=\"10\"} 1"));
        assert!(text.contains("moonbox_eval_duration_seconds_bucket{kind=\"eval\",le=\"+Inf\"} 2"));
        assert!(text.contains("moonbox_eval_duration_seconds_count{kind=\"eval\"} 2"));
        assert!(text.contains("moonbox_requests_refused_total{kind=\"overloaded\"} 1"));
        assert!(text.contains("moonbox_fuel_used_total 10"));
        assert!(text.contains("moonbox_instructions_total 5"));
        assert!(text.contains("moonbox_sessions_live 2"));
        assert!(text.contains("moonbox_queue_depth 1"));
        assert!(text.contains("moonbox_http_connections 3"));
    }
}
