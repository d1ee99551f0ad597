//! kazoo's `NonBlockingLease` and `MultiNonBlockingLease`: a lease held
//! until a time, not for a session, recorded in `<path>/lease_holder` as
//! kazoo's JSON (`{"version": 1, "holder": "<id>", "end": "<UTC,
//! %Y-%m-%dT%H:%M:%S>"}`). One try, under a kazoo `Lock` on `path` (kazoo's
//! `client.Lock(path, identifier)`), so kazoo and zoolock clients contend
//! for one lease: granted if nobody holds it, if its holder's end has
//! passed, or if the holder is this identifier (a renewal); never waited for.
//!
//! The end is a wall-clock time every client compares with its own clock:
//! clocks that disagree by more than a lease's margin give it twice. That is
//! kazoo's design, kept for interoperation; it suits "at most one of these
//! periodic jobs, roughly", not mutual exclusion (use a [`Lock`]).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::lock::{Kind, Lock, LockConfig};
use crate::error::{Error, Result};
use crate::holder::Acquire;
use crate::options::validate_path;
use crate::session::Session;
use crate::znode::{Create, Transaction};

/// The record's format version kazoo writes; another one is left to the
/// clients that know it (kazoo: "we need an upgrade, let someone else take it").
const VERSION: i64 = 1;

/// One try at the lease on `path` for `duration` (kazoo's
/// `NonBlockingLease(client, path, duration, identifier)`), by the clock
/// `now`: `Ok(true)` if obtained (or renewed), `Ok(false)` if another
/// identifier holds it until later, or its record is of another version.
/// [`Error::BadData`] if the record is not kazoo's JSON. Waits only for the
/// lock that serialises the try.
pub async fn try_lease(
    session: &Session,
    path: &str,
    duration: Duration,
    identifier: &str,
    now: SystemTime,
) -> Result<bool> {
    validate_path(path)?;
    let end = now
        .checked_add(duration)
        .and_then(|end| end.duration_since(UNIX_EPOCH).ok())
        .filter(|end| end.as_secs() < 253_402_300_800) // year 10000: strftime's limit
        .ok_or_else(|| Error::InvalidArgument("the lease would end past the year 9999 or before 1970".into()))?;
    session.ensure_path(path, None).await?;
    let lock =
        Lock::new(session, path, Kind::Mutex, LockConfig { identifier: identifier.into(), ..LockConfig::default() })?;
    lock.acquire(Acquire::default()).await?;
    let obtained = match lock.fenced() {
        Ok(fenced) => obtain(session, fenced, path, identifier, now, end).await,
        Err(Error::NotHeld { .. }) => Ok(false),
        Err(err) => Err(err),
    };
    let released = lock.release().await;
    let obtained = obtained?;
    released?;
    Ok(obtained)
}

/// [`try_lease`] on `<path>/0` … `<path>/<count - 1>` in turn until one is
/// obtained (kazoo's `MultiNonBlockingLease`: up to `count` holders at once).
pub async fn try_multi_lease(
    session: &Session,
    count: u32,
    path: &str,
    duration: Duration,
    identifier: &str,
    now: SystemTime,
) -> Result<bool> {
    validate_path(path)?;
    let base = path.trim_end_matches('/');
    for n in 0..count {
        if try_lease(session, &format!("{base}/{n}"), duration, identifier, now).await? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Under the lock: kazoo's `_attempt_obtaining`. The record is replaced in
/// one transaction through the lock's fence, the old one deleted at the
/// version read: a try whose lock was lost meanwhile (its session expired
/// between the acquire and the write, and another client's try took the
/// lock) writes nothing, and a record changed since the read is not
/// overwritten. Either is a failed try.
async fn obtain(
    session: &Session,
    fenced: Transaction,
    path: &str,
    identifier: &str,
    now: SystemTime,
    end: Duration,
) -> Result<bool> {
    let holder_path = format!("{}/lease_holder", path.trim_end_matches('/'));
    let replace = match session.get(&holder_path).await {
        Ok((data, stat)) => {
            let record = Record::decode(&holder_path, data.as_deref().unwrap_or_default())?;
            if record.version != VERSION {
                return Ok(false);
            }
            let now_secs = now.duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
            if record.holder != identifier && now_secs < record.end as f64 {
                return Ok(false);
            }
            fenced.delete(&holder_path, Some(stat.version))
        }
        Err(Error::NoNode { .. }) => fenced,
        Err(err) => return Err(err),
    };
    let data = Record::encode(identifier, end.as_secs() as i64);
    match replace.create(&holder_path, Some(data.as_bytes()), Create::default()).commit().await {
        Ok(_) => Ok(true),
        Err(Error::NotHeld { .. } | Error::BadVersion { .. } | Error::NoNode { .. } | Error::NodeExists { .. }) => {
            Ok(false)
        }
        Err(err) => Err(err),
    }
}

/// The `lease_holder` record.
struct Record {
    version: i64,
    holder: String,
    /// Seconds since the epoch, UTC.
    end: i64,
}

impl Record {
    /// As Python's `json.dumps` writes kazoo's dict: `", "` and `": "`
    /// between items, non-ASCII as `\uXXXX`.
    fn encode(holder: &str, end: i64) -> String {
        let mut quoted = String::from("\"");
        for c in holder.chars() {
            match c {
                '"' => quoted.push_str("\\\""),
                '\\' => quoted.push_str("\\\\"),
                '\n' => quoted.push_str("\\n"),
                '\r' => quoted.push_str("\\r"),
                '\t' => quoted.push_str("\\t"),
                '\u{8}' => quoted.push_str("\\b"),
                '\u{c}' => quoted.push_str("\\f"),
                ' '..='~' => quoted.push(c),
                _ => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        quoted.push_str(&format!("\\u{unit:04x}"));
                    }
                }
            }
        }
        quoted.push('"');
        format!("{{\"version\": {VERSION}, \"holder\": {quoted}, \"end\": \"{}\"}}", format_utc(end))
    }

    fn decode(path: &str, data: &[u8]) -> Result<Record> {
        let bad = |reason: &str| Error::BadData {
            path: path.to_owned(),
            reason: format!("{reason}: {:?}", String::from_utf8_lossy(&data[..data.len().min(128)])),
        };
        let value: serde_json::Value = serde_json::from_slice(data).map_err(|_| bad("not JSON"))?;
        let version = value.get("version").and_then(|v| v.as_i64()).ok_or_else(|| bad("no whole \"version\""))?;
        if version != VERSION {
            // Another format: the rest may mean something else.
            return Ok(Record { version, holder: String::new(), end: 0 });
        }
        let holder = value.get("holder").and_then(|h| h.as_str()).ok_or_else(|| bad("no text \"holder\""))?;
        let end =
            value.get("end").and_then(|e| e.as_str()).and_then(parse_utc).ok_or_else(|| bad("no \"end\" time"))?;
        Ok(Record { version, holder: holder.to_owned(), end })
    }
}

/// `%Y-%m-%dT%H:%M:%S` of a UTC time in seconds since the epoch.
fn format_utc(secs: i64) -> String {
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}", rest / 3600, rest % 3600 / 60, rest % 60)
}

/// The inverse of [`format_utc`] (what `datetime.strptime` accepts of it).
fn parse_utc(text: &str) -> Option<i64> {
    let (date, time) = text.split_once('T')?;
    let mut date = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (year, month, day) = (date.next()??, date.next()??, date.next()??);
    let mut time = time.splitn(3, ':').map(|p| p.parse::<i64>().ok());
    let (hour, minute, second) = (time.next()??, time.next()??, time.next()??);
    let valid = (1..=12).contains(&month)
        && (1..=31).contains(&day)
        && (0..24).contains(&hour)
        && (0..60).contains(&minute)
        && (0..60).contains(&second);
    valid.then(|| days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date of a day since 1970-01-01 (the inverse of [`days_from_civil`]).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days - era * 146_097;
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_written_and_read_as_kazoos_strftime() {
        // Each right-hand side is Python's datetime.utcfromtimestamp(secs).strftime("%Y-%m-%dT%H:%M:%S").
        for (secs, text) in [
            (0, "1970-01-01T00:00:00"),
            (951_782_400, "2000-02-29T00:00:00"),
            (1_795_734_000, "2026-11-26T23:00:00"),
            (4_107_542_399, "2100-02-28T23:59:59"),
            (253_402_300_799, "9999-12-31T23:59:59"),
        ] {
            assert_eq!(format_utc(secs), text);
            assert_eq!(parse_utc(text), Some(secs));
        }
        assert_eq!(parse_utc("2026-13-01T00:00:00"), None);
        assert_eq!(parse_utc("2026-11-26 21:00:00"), None);
    }

    #[test]
    fn records_are_written_as_pythons_json_dumps() {
        assert_eq!(
            Record::encode("host-1 \"x\" é😀", 0),
            r#"{"version": 1, "holder": "host-1 \"x\" \u00e9\ud83d\ude00", "end": "1970-01-01T00:00:00"}"#
        );
        let record = Record::decode("/p", Record::encode("é", 60).as_bytes()).unwrap();
        assert_eq!((record.version, record.holder.as_str(), record.end), (1, "é", 60));
        assert!(matches!(Record::decode("/p", b"{\"version\": 1}"), Err(Error::BadData { .. })));
        assert_eq!(Record::decode("/p", b"{\"version\": 2}").unwrap().version, 2);
    }
}
