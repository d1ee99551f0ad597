//! Durations on the command line: `250ms`, `5s`, `1.5m`, `2h`, `1d`, or a
//! plain number of seconds (the older spelling). Every one is bounded, so
//! no deadline computed from it can overflow, and printed the same way.

use std::time::Duration;

/// The longest duration any flag takes: a year.
pub const MAX: Duration = Duration::from_secs(365 * 24 * 3600);

const UNITS: [(&str, f64); 5] = [("ms", 0.001), ("s", 1.0), ("m", 60.0), ("h", 3600.0), ("d", 86400.0)];

/// Parses `text` as a duration, for clap's `value_parser`: numbers each
/// followed by a unit (`1m30s`), or one plain number of seconds.
pub fn parse(text: &str) -> Result<Duration, String> {
    let bad = || format!("{text:?} is not a duration: write a number with ms, s, m, h or d (e.g. 250ms, 5s, 1m30s)");
    let number_char = |c: char| c.is_ascii_digit() || c == '.';
    let mut rest = text;
    let mut seconds = 0.0;
    if !rest.is_empty() && rest.chars().all(number_char) {
        seconds = rest.parse::<f64>().map_err(|_| bad())?;
        rest = "";
    } else if rest.is_empty() {
        return Err(bad());
    }
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !number_char(c)).unwrap_or(rest.len());
        let (number, tail) = rest.split_at(digits);
        let letters = tail.find(number_char).unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(letters);
        let scale = UNITS.iter().find(|(name, _)| *name == unit).map(|(_, scale)| *scale).ok_or_else(bad)?;
        seconds += number.parse::<f64>().map_err(|_| bad())? * scale;
        rest = tail;
    }
    if seconds > MAX.as_secs_f64() {
        return Err(format!("{text:?} is longer than the longest duration zoolock takes ({})", show(MAX)));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// A duration as a person writes it: `0s`, `250ms`, `7.5s`, `2m30s`, `1h`, `3d4h`.
pub fn show(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis < 1000 {
        return if millis == 0 && !duration.is_zero() { "<1ms".into() } else { format!("{millis}ms") };
    }
    if millis < 60_000 {
        let text = format!("{:.3}", millis as f64 / 1000.0);
        return format!("{}s", text.trim_end_matches('0').trim_end_matches('.'));
    }
    let mut seconds = duration.as_secs();
    let mut out = String::new();
    for (unit, size) in [("d", 86400), ("h", 3600), ("m", 60), ("s", 1)] {
        if seconds >= size {
            out.push_str(&format!("{}{unit}", seconds / size));
            seconds %= size;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_plain_seconds() {
        assert_eq!(parse("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(parse("1m"), Ok(Duration::from_secs(60)));
        assert_eq!(parse("1.5h"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse("2d"), Ok(Duration::from_secs(2 * 86400)));
        assert_eq!(parse("0.3"), Ok(Duration::from_millis(300)));
        assert_eq!(parse("0"), Ok(Duration::ZERO));
        assert_eq!(parse("365d"), Ok(MAX));
        assert_eq!(parse("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse("1h0.5m"), Ok(Duration::from_secs(3630)));
        for bad in ["", "s", "-1", "-1s", "1e300", "inf", "NaN", "5 s", "5sec", "1.2.3s", "366d", "1e3", "1m30", "1s1"]
        {
            assert!(parse(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn shown_as_written() {
        let cases = [
            (Duration::ZERO, "0ms"),
            (Duration::from_micros(10), "<1ms"),
            (Duration::from_millis(250), "250ms"),
            (Duration::from_secs(5), "5s"),
            (Duration::from_millis(7500), "7.5s"),
            (Duration::from_secs(150), "2m30s"),
            (Duration::from_secs(3600), "1h"),
            (MAX, "365d"),
        ];
        for (duration, text) in cases {
            assert_eq!(show(duration), text);
            if duration >= Duration::from_millis(1) {
                assert_eq!(parse(text), Ok(duration), "{text}");
            }
        }
    }
}
