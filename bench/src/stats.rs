//! Medians, percentiles and how figures are printed.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// Median, 99th percentile and sample count of a set of durations.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub(crate) struct Summary {
    pub median: Duration,
    pub p99: Duration,
    pub samples: usize,
}

impl Summary {
    /// Summarises `samples`, or `None` when there are none.
    pub fn of(mut samples: Vec<Duration>) -> Option<Summary> {
        if samples.is_empty() {
            return None;
        }
        samples.sort();
        let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
        Some(Summary {
            median: at(0.5),
            p99: at(0.99),
            samples: samples.len(),
        })
    }

    /// Times `n` calls of `f`, each of which must succeed.
    pub async fn time_each(n: usize, mut f: impl AsyncFnMut() -> Result<()>) -> Result<Summary> {
        let mut times = Vec::with_capacity(n);
        for _ in 0..n {
            let started = Instant::now();
            f().await?;
            times.push(started.elapsed());
        }
        Summary::of(times).context("no samples")
    }

    /// The median in seconds.
    pub fn secs(&self) -> f64 {
        self.median.as_secs_f64()
    }
}

/// A duration in the unit that reads best: µs below 1 ms, else ms below
/// 10 s, else s.
pub(crate) fn time(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us < 1_000.0 {
        format!("{us:.1} µs")
    } else if us < 10_000_000.0 {
        format!("{:.2} ms", us / 1000.0)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

/// A ratio such as `12.3x`, with more digits when it is small.
pub(crate) fn ratio(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}x")
    } else if x >= 10.0 {
        format!("{x:.1}x")
    } else {
        format!("{x:.2}x")
    }
}

/// Bytes as KiB or MiB.
pub(crate) fn bytes(b: f64) -> String {
    if b >= 10.0 * 1024.0 * 1024.0 {
        format!("{:.1} MiB", b / (1024.0 * 1024.0))
    } else {
        format!("{:.1} KiB", b / 1024.0)
    }
}

/// Geometric mean of positive numbers.
pub(crate) fn geometric_mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() || xs.iter().any(|x| *x <= 0.0 || !x.is_finite()) {
        return None;
    }
    Some((xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_p99_come_from_the_sorted_samples() {
        let samples = (1..=100).rev().map(Duration::from_micros).collect();
        let s = Summary::of(samples).unwrap();
        assert_eq!(s.median, Duration::from_micros(51));
        assert_eq!(s.p99, Duration::from_micros(99));
        assert_eq!(s.samples, 100);
        assert!(Summary::of(Vec::new()).is_none());
    }

    #[test]
    fn geometric_mean_of_ratios() {
        let g = geometric_mean(&[2.0, 8.0]).unwrap();
        assert!((g - 4.0).abs() < 1e-12);
        assert!(geometric_mean(&[]).is_none());
        assert!(geometric_mean(&[1.0, 0.0]).is_none());
    }

    #[test]
    fn units_read_well() {
        assert_eq!(time(Duration::from_nanos(8_300)), "8.3 µs");
        assert_eq!(time(Duration::from_millis(35)), "35.00 ms");
        assert_eq!(time(Duration::from_micros(8_877)), "8.88 ms");
        assert_eq!(time(Duration::from_secs(12)), "12.00 s");
        assert_eq!(ratio(1234.5), "1234x");
        assert_eq!(ratio(1.234), "1.23x");
        assert_eq!(bytes(2048.0), "2.0 KiB");
    }
}
