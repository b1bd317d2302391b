//! The one duration syntax of every duration flag, the `partwise` command's
//! and the ticker's: `500ms`, `10s`, `2m`, `1h`, or a bare number in the
//! flag's historical unit (seconds for `--timeout`, milliseconds for the
//! Java-named `--*-ms` flags), so old invocations keep their meaning. Both
//! binaries use these functions as clap value parsers, so a bad value is a
//! usage error (exit 2) naming the flag; the messages name no flag.

use std::time::Duration;

/// What a bare number counts.
#[derive(Clone, Copy)]
pub enum Bare {
    /// A bare number is seconds (`--timeout 10`).
    Seconds,
    /// A bare number is milliseconds (the Java client's `*.ms` settings).
    Millis,
}

/// `s` as a duration of at least zero; `bare` is the unit of a number
/// without one.
pub fn parse(s: &str, bare: Bare) -> Result<Duration, String> {
    let t = s.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = t.strip_suffix('h') {
        (n, 3600.0)
    } else {
        match bare {
            Bare::Seconds => (t, 1.0),
            Bare::Millis => (t, 1e-3),
        }
    };
    let unit = match bare {
        Bare::Seconds => "seconds",
        Bare::Millis => "milliseconds",
    };
    let v: f64 = num
        .trim()
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(|| format!("not a duration (500ms, 10s, 2m, or a bare number of {unit})"))?;
    if v < 0.0 {
        return Err("a duration cannot be negative".into());
    }
    // Checked before converting: from_secs_f64 panics past u64 seconds.
    if v * scale > 1e12 {
        return Err("too long".into());
    }
    Ok(Duration::from_secs_f64(v * scale))
}

/// `--timeout`-style values: bare seconds, more than 0 and at most an hour.
pub fn seconds(s: &str) -> Result<Duration, String> {
    let d = parse(s, Bare::Seconds)?;
    if d.is_zero() || d > Duration::from_secs(3600) {
        return Err("must be more than 0 and at most 3600 s".into());
    }
    Ok(d)
}

/// The Java client's `*.ms` settings: bare milliseconds, at most what
/// Kafka's 32-bit millisecond fields hold (about 24.8 days).
pub fn millis(s: &str) -> Result<Duration, String> {
    let d = parse(s, Bare::Millis)?;
    if d > Duration::from_millis(i32::MAX as u64) {
        return Err(format!("at most {} ms (Kafka's limit)", i32::MAX));
    }
    Ok(d)
}

/// A `*.ms` setting that 0 would break (a heartbeat in a busy loop, a
/// session or poll interval that expires at once): at least 1 ms.
pub fn positive_millis(s: &str) -> Result<Duration, String> {
    let d = millis(s)?;
    if d < Duration::from_millis(1) {
        return Err("must be more than 0 (at least 1ms)".into());
    }
    Ok(d)
}

/// A window of recent time (`kafka audit --since 10m`): bare seconds, at
/// least 1 ms, at most a year.
pub fn window(s: &str) -> Result<Duration, String> {
    let d = parse(s, Bare::Seconds)?;
    if d < Duration::from_millis(1) || d > Duration::from_secs(366 * 24 * 3600) {
        return Err("must be at least 1ms and at most a year (8784h)".into());
    }
    Ok(d)
}

/// `d` in the grammar's own words, in its largest whole unit (`10m`,
/// `90s`, `1500ms`), so that what a flag was given reads back alike.
pub fn label(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(3_600_000) && ms > 0 {
        format!("{}h", ms / 3_600_000)
    } else if ms.is_multiple_of(60_000) && ms > 0 {
        format!("{}m", ms / 60_000)
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_and_their_labels() {
        assert_eq!(window("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(window("90"), Ok(Duration::from_secs(90)));
        assert!(window("0").is_err());
        assert!(window("9000h").is_err());
        assert_eq!(label(window("10m").unwrap()), "10m");
        assert_eq!(label(window("2h").unwrap()), "2h");
        assert_eq!(label(window("90s").unwrap()), "90s");
        assert_eq!(label(window("1500ms").unwrap()), "1500ms");
    }

    #[test]
    fn units_and_bare_numbers() {
        let ms = Duration::from_millis;
        assert_eq!(seconds("10").unwrap(), ms(10_000));
        assert_eq!(seconds("1.5").unwrap(), ms(1500));
        assert_eq!(seconds("500ms").unwrap(), ms(500));
        assert_eq!(seconds(" 2s ").unwrap(), ms(2000));
        assert_eq!(seconds("2m").unwrap(), ms(120_000));
        assert_eq!(seconds("1h").unwrap(), ms(3_600_000));
        assert_eq!(millis("45000").unwrap(), ms(45_000));
        assert_eq!(millis("45s").unwrap(), ms(45_000));
        assert_eq!(millis("0").unwrap(), ms(0));
        assert_eq!(millis("2m").unwrap(), ms(120_000));
    }

    #[test]
    fn bad_values_say_why() {
        for (v, why) in [
            ("0", "more than 0"),
            ("-3", "negative"),
            ("2h", "at most 3600"),
            ("abc", "not a duration"),
            ("5 minutes", "not a duration"),
            ("NaN", "not a duration"),
            ("inf", "not a duration"),
            ("1e300s", "too long"),
        ] {
            let e = seconds(v).unwrap_err();
            assert!(e.contains(why), "{v}: {e}");
        }
        assert!(millis("30d").unwrap_err().contains("not a duration"));
        assert!(millis("25d").is_err());
        assert!(millis("3000000000").unwrap_err().contains("Kafka"));
        assert!(positive_millis("0").unwrap_err().contains("more than 0"));
        assert!(positive_millis("0.5").is_err());
        assert_eq!(positive_millis("1").unwrap(), Duration::from_millis(1));
    }

    /// `redis --timeout`'s values.
    #[test]
    fn redis_timeouts() {
        assert_eq!(seconds("2"), Ok(Duration::from_secs(2)));
        assert_eq!(seconds("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(seconds("500ms"), Ok(Duration::from_millis(500)));
        for bad in ["0", "-1", "x", "", "inf", "NaN", "5000"] {
            assert!(seconds(bad).is_err(), "{bad}");
        }
    }
}
