//! Order statistics and formatting for the benchmark's figures.

/// Median, extremes and 99th percentile of one set of samples.
#[derive(Clone, Copy, Debug)]
pub struct Summary {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub p99: f64,
}

impl Summary {
    pub fn of(samples: &[f64]) -> Summary {
        assert!(!samples.is_empty(), "no samples");
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let at = |p: f64| sorted[((sorted.len() - 1) as f64 * p).round() as usize];
        // An even count takes the mean of the two middle samples.
        let n = sorted.len();
        let median = if n % 2 == 1 { sorted[n / 2] } else { (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0 };
        Summary { median, min: sorted[0], max: sorted[n - 1], p99: at(0.99) }
    }
}

/// Microseconds as a short human figure: `850 µs`, `1.23 ms`.
pub fn time(us: f64) -> String {
    if us >= 10_000.0 {
        format!("{:.1} ms", us / 1000.0)
    } else if us >= 1000.0 {
        format!("{:.2} ms", us / 1000.0)
    } else if us >= 100.0 {
        format!("{us:.0} µs")
    } else {
        format!("{us:.1} µs")
    }
}

/// `median (min–max)` of a timing summary.
pub fn spread(s: &Summary) -> String {
    format!("{} ({}–{})", time(s.median), time(s.min), time(s.max))
}

/// Today's date (UTC) as YYYY-MM-DD, from the system clock, written as the
/// fake writes its dates.
pub fn today() -> String {
    let (secs, _) = crate::fake_backend::util::now();
    crate::fake_backend::util::fmt_sqlite(secs)[..10].to_string()
}
