//! Costs and durations as people read them: one rule for each, the same in `mctl` and in the app
//! (`ui/src/lib/format.ts`), checked on the same cases by both (`tests/fixtures/format/cases.json`).

/// A cost in dollars: `$1.23`; `$0.0064` below a cent, so that a cheap run does not read as free;
/// `<$0.0001` below that; `≈` before an estimate from the price table; `—` when unknown (a model
/// with no price): never `$0.00` for what nobody knows.
pub fn cost_text(usd: Option<f64>, estimated: bool) -> String {
    let Some(usd) = usd.filter(|c| c.is_finite()) else {
        return "—".to_owned();
    };
    let mark = if estimated { "≈" } else { "" };
    let usd = usd.max(0.0);
    if usd > 0.0 && usd < 0.0001 {
        return format!("{mark}<$0.0001");
    }
    // Rounded to whole cents (or hundredths of a cent) before it is written, half up, as the
    // app rounds: formatting alone rounds an exact half to even ($0.125 would read $0.12).
    let places = if usd > 0.0 && usd < 0.01 { 4 } else { 2 };
    let scale = 10f64.powi(places as i32);
    format!("{mark}${:.places$}", (usd * scale).round() / scale)
}

/// A duration in milliseconds: `850 ms`, `12s`, `4m 05s`, `3h 20m`, `2d 4h`; `–` when unknown.
pub fn duration_text(ms: Option<f64>) -> String {
    let Some(ms) = ms.filter(|m| m.is_finite() && *m >= 0.0) else {
        return "–".to_owned();
    };
    if ms < 1000.0 {
        return format!("{} ms", ms.round());
    }
    let s = (ms / 1000.0).floor() as u64;
    let m = s / 60;
    let h = m / 60;
    match () {
        _ if s < 60 => format!("{s}s"),
        _ if m < 60 => format!("{m}m {:02}s", s % 60),
        _ if h < 24 => format!("{h}h {:02}m", m % 60),
        _ => format!("{}d {}h", h / 24, h % 24),
    }
}
