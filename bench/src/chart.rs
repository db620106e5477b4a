//! The cold-start chart: one horizontal bar per contender, median time on
//! a logarithmic axis, as a self-contained SVG.

use std::fmt::Write;
use std::time::Duration;

/// One bar: a label, its median, and whether it is moonbox's own.
pub(crate) struct Bar {
    pub label: String,
    pub median: Duration,
    pub ours: bool,
}

const WIDTH: f64 = 860.0;
const LEFT: f64 = 330.0;
const RIGHT: f64 = 90.0;
const TOP: f64 = 56.0;
const ROW: f64 = 34.0;

/// Draws the bars, longest last, on a log axis spanning whole decades.
pub(crate) fn svg(title: &str, subtitle: &str, bars: &[Bar]) -> String {
    let micros = |d: Duration| (d.as_secs_f64() * 1e6).max(0.01);
    let lo = bars
        .iter()
        .map(|b| micros(b.median))
        .fold(f64::INFINITY, f64::min);
    let hi = bars.iter().map(|b| micros(b.median)).fold(1.0, f64::max);
    let (lo, hi) = (
        lo.log10().floor(),
        hi.log10().ceil().max(lo.log10().floor() + 1.0),
    );
    let plot = WIDTH - LEFT - RIGHT;
    let x = |us: f64| LEFT + (us.log10() - lo) / (hi - lo) * plot;
    let height = TOP + ROW * bars.len() as f64 + 50.0;

    let mut s = String::new();
    let _ = writeln!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="13">"##
    );
    let _ = writeln!(s, r##"<rect width="100%" height="100%" fill="#ffffff"/>"##);
    let _ = writeln!(
        s,
        r##"<text x="16" y="24" font-size="16" font-weight="bold">{}</text>"##,
        escape(title)
    );
    let _ = writeln!(
        s,
        r##"<text x="16" y="42" fill="#555555">{}</text>"##,
        escape(subtitle)
    );
    let bottom = TOP + ROW * bars.len() as f64;
    for decade in lo as i32..=hi as i32 {
        let us = 10f64.powi(decade);
        let gx = x(us);
        let _ = writeln!(
            s,
            r##"<line x1="{gx:.1}" y1="{TOP}" x2="{gx:.1}" y2="{bottom}" stroke="#dddddd"/><text x="{gx:.1}" y="{:.1}" text-anchor="middle" fill="#555555">{}</text>"##,
            bottom + 18.0,
            axis_label(us)
        );
    }
    let _ = writeln!(
        s,
        r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#555555">median time to the result of `return 1+1` (log scale, lower is better)</text>"##,
        LEFT + plot / 2.0,
        bottom + 40.0
    );
    for (i, bar) in bars.iter().enumerate() {
        let y = TOP + ROW * i as f64;
        let w = (x(micros(bar.median)) - LEFT).max(1.0);
        let fill = if bar.ours { "#2f6fb0" } else { "#9a9a9a" };
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text><rect x="{LEFT}" y="{:.1}" width="{w:.1}" height="{:.1}" fill="{fill}"/><text x="{:.1}" y="{:.1}">{}</text>"##,
            LEFT - 8.0,
            y + ROW * 0.62,
            escape(&bar.label),
            y + 6.0,
            ROW - 12.0,
            LEFT + w + 6.0,
            y + ROW * 0.62,
            super::stats::time(bar.median)
        );
    }
    s.push_str("</svg>\n");
    s
}

fn axis_label(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.0} s", us / 1e6)
    } else if us >= 1e3 {
        format!("{:.0} ms", us / 1e3)
    } else {
        format!("{us} µs")
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_scale_by_decade_and_labels_are_escaped() {
        let bars = [
            Bar {
                label: "fast <moonbox>".into(),
                median: Duration::from_micros(10),
                ours: true,
            },
            Bar {
                label: "slow".into(),
                median: Duration::from_millis(100),
                ours: false,
            },
        ];
        let svg = svg("t", "s", &bars);
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("fast &lt;moonbox&gt;"));
        // An axis from 10 µs to 100 ms has a grid line at each of five decades.
        assert_eq!(svg.matches("<line").count(), 5);
        assert!(svg.contains(">10 µs<") && svg.contains(">100 ms<"));
    }
}
