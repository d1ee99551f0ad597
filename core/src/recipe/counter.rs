//! kazoo's `Counter`: a number kept as the data of one node, changed by a
//! read and a write conditional on the version read, tried again when
//! another client changed it in between. The data is kazoo's (`repr` of the
//! value, ASCII; empty means the default) or, with
//! [`CounterFormat::Curator`], Curator's `SharedCount` (a 4-byte big-endian
//! int), so kazoo and Curator clients share the node.
//!
//! One thing kazoo does not: a change whose reply was lost is never applied
//! twice. kazoo reads and adds again after a connection loss, so a write
//! that was made but not answered counts twice. Here the same conditional
//! write is sent again; at most one of the two can apply (both name the
//! version read). If that one finds the version changed, either write may
//! have been ours: the change fails with [`Error::OutcomeUnknown`] instead of
//! guessing, unless the node shows another client's write at the very version ours
//! would have made, which proves ours was not made: then it reads and tries again.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use zookeeper_client as zk;

use crate::error::{connection_lost, Error, Result};
use crate::options::validate_path;
use crate::runtime;
use crate::session::Session;
use crate::znode::Retry;

/// A counter's value: kazoo's counters hold an `int` or a `float`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CounterValue {
    /// A whole number (kazoo's `int`; Curator's is 32 bits).
    Int(i64),
    /// A floating-point number (kazoo's `float`).
    Float(f64),
}

impl From<i64> for CounterValue {
    fn from(value: i64) -> Self {
        CounterValue::Int(value)
    }
}

impl From<i32> for CounterValue {
    fn from(value: i32) -> Self {
        CounterValue::Int(value.into())
    }
}

impl From<f64> for CounterValue {
    fn from(value: f64) -> Self {
        CounterValue::Float(value)
    }
}

impl std::fmt::Display for CounterValue {
    /// As kazoo writes it: Python's `repr`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CounterValue::Int(value) => write!(f, "{value}"),
            CounterValue::Float(value) => f.write_str(&python_float_repr(*value)),
        }
    }
}

/// How the value is stored in the node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CounterFormat {
    /// kazoo's: the value as ASCII text, Python's `repr` (`"7"`, `"2.5"`).
    #[default]
    Kazoo,
    /// Curator's `SharedCount` (kazoo's `support_curator=True`): a 32-bit
    /// big-endian int; whole numbers only.
    Curator,
}

/// What one change did: the value it read and the value it wrote (kazoo's
/// `pre_value` and `post_value`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CounterChange {
    /// The value before the change.
    pub pre_value: CounterValue,
    /// The value the change wrote.
    pub post_value: CounterValue,
}

/// A whole number Curator's 32-bit count holds.
fn fits_curator(value: CounterValue) -> bool {
    matches!(value, CounterValue::Int(v) if i32::try_from(v).is_ok())
}

/// A shared counter on one node (kazoo's `Counter(path, default=0,
/// support_curator=False)`). Cheap to clone; nothing is sent before the first call.
///
/// ```
/// use zoolock::{Counter, CounterValue, Session, SessionOptions};
/// # fn main() -> zoolock::Result<()> {
/// # let connect = zk_harness::shared().connect_string();
/// # let path = format!("/zoolock-doc{}", zk_harness::unique_path("counter"));
/// let session = Session::connect_blocking(SessionOptions::new(connect))?;
/// let jobs = Counter::new(&session, &path, 0)?;
/// let change = jobs.add_blocking(5)?;
/// assert_eq!(change.post_value, CounterValue::Int(5));
/// jobs.subtract_blocking(2)?;
/// assert_eq!(jobs.value_blocking()?, CounterValue::Int(3));
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Counter {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Counter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Counter").field("path", &self.inner.path).finish_non_exhaustive()
    }
}

struct Inner {
    session: Session,
    path: String,
    default: CounterValue,
    format: CounterFormat,
    /// The node is known to exist (kazoo's `_ensured_path`).
    ensured: AtomicBool,
}

/// How a conditional write ended.
enum Write {
    Made,
    /// Another client's write came first: read again.
    Changed,
}

impl Counter {
    /// A counter in kazoo's format whose empty node reads as `default`; its
    /// type (whole or floating) is the counter's: changes must be of it.
    pub fn new(session: &Session, path: &str, default: impl Into<CounterValue>) -> Result<Counter> {
        Counter::with_format(session, path, default.into(), CounterFormat::Kazoo)
    }

    /// A counter in `format`; Curator's takes a whole default that fits 32 bits.
    pub fn with_format(session: &Session, path: &str, default: CounterValue, format: CounterFormat) -> Result<Counter> {
        validate_path(path)?;
        if format == CounterFormat::Curator && !fits_curator(default) {
            return Err(Error::InvalidArgument(
                "a counter in Curator's format counts whole numbers of 32 bits: the default must be one".into(),
            ));
        }
        Ok(Counter {
            inner: Arc::new(Inner {
                session: session.clone(),
                path: path.to_owned(),
                default,
                format,
                ensured: AtomicBool::new(false),
            }),
        })
    }

    /// The counter's node.
    pub fn path(&self) -> &str {
        &self.inner.path
    }

    /// What an empty node reads as; its type is the counter's.
    pub fn default_value(&self) -> CounterValue {
        self.inner.default
    }

    /// How the value is stored.
    pub fn format(&self) -> CounterFormat {
        self.inner.format
    }

    /// The value now (kazoo's `counter.value`), creating the node if missing.
    pub async fn value(&self) -> Result<CounterValue> {
        Ok(self.read().await?.0)
    }

    /// Adds `delta`, of the counter's type (kazoo's `counter += delta`).
    /// [`Error::InvalidArgument`] for another type or a result out of range;
    /// [`Error::BadData`] if the node holds something that is not a value.
    pub async fn add(&self, delta: impl Into<CounterValue>) -> Result<CounterChange> {
        let delta = delta.into();
        self.check_type(delta)?;
        loop {
            let (pre_value, version) = self.read().await?;
            let post_value = self.sum(pre_value, delta)?;
            let data = self.encode(post_value);
            match self.write(&data, version).await? {
                Write::Made => return Ok(CounterChange { pre_value, post_value }),
                Write::Changed => continue,
            }
        }
    }

    /// Subtracts `delta` (kazoo's `counter -= delta`).
    pub async fn subtract(&self, delta: impl Into<CounterValue>) -> Result<CounterChange> {
        let negated = match delta.into() {
            CounterValue::Int(v) => CounterValue::Int(
                v.checked_neg().ok_or_else(|| Error::InvalidArgument(format!("cannot subtract {v}: out of range")))?,
            ),
            CounterValue::Float(v) => CounterValue::Float(-v),
        };
        self.add(negated).await
    }

    /// Sets the value to `new` if it is `expected` now (Curator's
    /// `DistributedAtomicLong.compareAndSet`, `SharedCount.trySetCount`):
    /// true if set; false, changing nothing, if it was another. Both of the
    /// counter's type, else [`Error::InvalidArgument`]; a lost reply as for [`Counter::add`].
    pub async fn compare_and_set(
        &self,
        expected: impl Into<CounterValue>,
        new: impl Into<CounterValue>,
    ) -> Result<bool> {
        let (expected, new) = (expected.into(), new.into());
        self.check_type(expected)?;
        self.check_type(new)?;
        if self.inner.format == CounterFormat::Curator && !fits_curator(new) {
            return Err(Error::InvalidArgument(format!("{new} is out of the range of Curator's 32-bit count")));
        }
        let data = self.encode(new);
        loop {
            let (value, version) = self.read().await?;
            if value != expected {
                return Ok(false);
            }
            // Another client's write in between: set only if it left `expected`.
            match self.write(&data, version).await? {
                Write::Made => return Ok(true),
                Write::Changed => continue,
            }
        }
    }

    /// [`Counter::value`] for code without a runtime.
    pub fn value_blocking(&self) -> Result<CounterValue> {
        runtime::block_on(self.value())
    }

    /// [`Counter::add`] for code without a runtime.
    pub fn add_blocking(&self, delta: impl Into<CounterValue>) -> Result<CounterChange> {
        runtime::block_on(self.add(delta))
    }

    /// [`Counter::compare_and_set`] for code without a runtime.
    pub fn compare_and_set_blocking(
        &self,
        expected: impl Into<CounterValue>,
        new: impl Into<CounterValue>,
    ) -> Result<bool> {
        runtime::block_on(self.compare_and_set(expected, new))
    }

    /// [`Counter::subtract`] for code without a runtime.
    pub fn subtract_blocking(&self, delta: impl Into<CounterValue>) -> Result<CounterChange> {
        runtime::block_on(self.subtract(delta))
    }

    fn check_type(&self, delta: CounterValue) -> Result<()> {
        match (self.inner.default, delta) {
            (CounterValue::Int(_), CounterValue::Int(_)) | (CounterValue::Float(_), CounterValue::Float(_)) => Ok(()),
            (CounterValue::Int(_), CounterValue::Float(_)) => {
                Err(Error::InvalidArgument("a counter of whole numbers changes by whole numbers".into()))
            }
            (CounterValue::Float(_), CounterValue::Int(_)) => {
                Err(Error::InvalidArgument("a floating-point counter changes by floating-point numbers".into()))
            }
        }
    }

    fn sum(&self, pre: CounterValue, delta: CounterValue) -> Result<CounterValue> {
        let out_of_range = || Error::InvalidArgument(format!("{pre} + {delta} is out of the counter's range"));
        match (pre, delta, self.inner.format) {
            (CounterValue::Int(a), CounterValue::Int(b), CounterFormat::Curator) => {
                let sum = i32::try_from(a).ok().and_then(|a| a.checked_add(i32::try_from(b).ok()?));
                sum.map(|s| CounterValue::Int(s.into())).ok_or_else(out_of_range)
            }
            (CounterValue::Int(a), CounterValue::Int(b), _) => {
                a.checked_add(b).map(CounterValue::Int).ok_or_else(out_of_range)
            }
            (CounterValue::Float(a), CounterValue::Float(b), _) => Ok(CounterValue::Float(a + b)),
            _ => unreachable!("the delta's type was checked"),
        }
    }

    fn encode(&self, value: CounterValue) -> Vec<u8> {
        match (self.inner.format, value) {
            (CounterFormat::Curator, CounterValue::Int(v)) => (v as i32).to_be_bytes().to_vec(),
            _ => value.to_string().into_bytes(),
        }
    }

    fn decode(&self, data: &[u8]) -> Result<CounterValue> {
        if data.is_empty() {
            return Ok(self.inner.default);
        }
        let bad = |why: &str| Error::BadData {
            path: self.inner.path.clone(),
            reason: format!("{why}: {:?}", String::from_utf8_lossy(&data[..data.len().min(64)])),
        };
        if self.inner.format == CounterFormat::Curator {
            let bytes: [u8; 4] = data.try_into().map_err(|_| bad("not Curator's 4-byte count"))?;
            return Ok(CounterValue::Int(i32::from_be_bytes(bytes).into()));
        }
        let text = std::str::from_utf8(data).ok().filter(|t| t.is_ascii()).ok_or_else(|| bad("not ASCII"))?.trim();
        match self.inner.default {
            CounterValue::Int(_) => text.parse().map(CounterValue::Int).map_err(|_| bad("not a whole number")),
            CounterValue::Float(_) => text.parse().map(CounterValue::Float).map_err(|_| bad("not a number")),
        }
    }

    /// The value and the node's version, creating the node (empty: the
    /// default) if missing; again if it was deleted since.
    async fn read(&self) -> Result<(CounterValue, i32)> {
        let session = &self.inner.session;
        let path = &self.inner.path;
        let (data, version) = session
            .retry(Retry::default(), || async {
                let live = session.live().await?;
                session
                    .bounded(async {
                        loop {
                            if !self.inner.ensured.load(Ordering::Acquire) {
                                let persistent =
                                    zk::CreateMode::Persistent.with_acls(zk::Acls::new(&session.options().acls));
                                crate::znode::make_dirs(session, &live, path, &persistent)
                                    .await
                                    .map_err(|e| Error::zk(path, "create", e))?;
                                self.inner.ensured.store(true, Ordering::Release);
                            }
                            match live.client.get_data(path).await {
                                Ok((data, stat)) => return Ok((data, stat.version)),
                                Err(zk::Error::NoNode) => self.inner.ensured.store(false, Ordering::Release),
                                Err(err) => return Err(Error::zk(path, "read", err)),
                            }
                        }
                    })
                    .await
            })
            .await?;
        Ok((self.decode(&data)?, version))
    }

    /// Writes `data` if the node is still at `version`. A send whose answer
    /// was lost is sent again as it was (see the module's header).
    async fn write(&self, data: &[u8], version: i32) -> Result<Write> {
        let session = &self.inner.session;
        let path = &self.inner.path;
        let policy = Retry::default();
        let deadline = policy.deadline.and_then(|d| tokio::time::Instant::now().checked_add(d));
        // Whether an earlier send of this write may have been applied.
        let mut sent_unanswered = false;
        let mut tries = 0;
        loop {
            tries += 1;
            let answer = session
                .bounded(async {
                    let live = session.live().await?;
                    Ok(live.client.set_data(path, data, Some(version)).await)
                })
                .await;
            match answer {
                Ok(Ok(_)) => return Ok(Write::Made),
                Ok(Err(zk::Error::BadVersion)) if !sent_unanswered => return Ok(Write::Changed),
                Ok(Err(zk::Error::BadVersion)) => return self.after_lost_write(data, version).await,
                Ok(Err(zk::Error::NoNode)) => {
                    self.inner.ensured.store(false, Ordering::Release);
                    if sent_unanswered {
                        return Err(Error::OutcomeUnknown { action: "change", path: path.clone() });
                    }
                    return Ok(Write::Changed);
                }
                // The send may have been applied: sent again below.
                Ok(Err(err)) if connection_lost(&err) || err == zk::Error::SessionExpired => {}
                Ok(Err(err)) => return Err(Error::zk(path, "set", err)),
                Err(Error::ConnectionLoss(_)) => {}
                Err(err) => return Err(err),
            }
            sent_unanswered = true;
            if tries >= policy.max_tries || deadline.is_some_and(|d| tokio::time::Instant::now() >= d) {
                return Err(Error::OutcomeUnknown { action: "change", path: path.clone() });
            }
            // The next send waits for a connection (requests queue while it is down);
            // this only keeps a flapping connection from spinning.
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// A write sent again after a lost answer found another version: was
    /// the first send ours? Only another client's write at `version + 1`
    /// proves it was not.
    async fn after_lost_write(&self, ours: &[u8], version: i32) -> Result<Write> {
        let session = &self.inner.session;
        let path = &self.inner.path;
        let (data, stat) = session.retry(Retry::default(), || session.get(path)).await?;
        if stat.version == version + 1 && data.as_deref().unwrap_or_default() != ours {
            return Ok(Write::Changed);
        }
        Err(Error::OutcomeUnknown { action: "change", path: path.clone() })
    }
}

/// Python's `repr` of a float, which kazoo writes: the shortest digits that
/// read back the same (as Rust's), fixed-point for exponents from -4 to 15
/// with at least one digit after the point, otherwise `d.ddde+XX`.
fn python_float_repr(value: f64) -> String {
    if value.is_nan() {
        return "nan".into();
    }
    if value.is_infinite() {
        return if value > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let scientific = format!("{value:e}"); // "-1.2345e-7", "5e0"
    let (mantissa, exponent) = scientific.split_once('e').expect("{:e} has an exponent");
    let exponent: i32 = exponent.parse().expect("{:e}'s exponent is a number");
    let (sign, mantissa) = mantissa.strip_prefix('-').map_or(("", mantissa), |m| ("-", m));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let mut out = String::from(sign);
    if !(-4..16).contains(&exponent) {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exponent < 0 { '-' } else { '+' }, exponent.abs());
    } else if exponent < 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-exponent - 1) as usize));
        out.push_str(&digits);
    } else {
        let point = exponent as usize + 1;
        if digits.len() > point {
            out.push_str(&digits[..point]);
            out.push('.');
            out.push_str(&digits[point..]);
        } else {
            out.push_str(&digits);
            out.extend(std::iter::repeat_n('0', point - digits.len()));
            out.push_str(".0");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::python_float_repr;

    #[test]
    fn floats_are_written_as_python_writes_them() {
        // Each right-hand side is Python 3.11's repr of the left.
        let cases: &[(f64, &str)] = &[
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (3.0, "3.0"),
            (2.5, "2.5"),
            (0.1, "0.1"),
            (1.0 / 3.0, "0.3333333333333333"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (123456.789, "123456.789"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (-2.5e300, "-2.5e+300"),
            (f64::MAX, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
        ];
        for (value, python) in cases {
            assert_eq!(python_float_repr(*value), *python, "repr({value:?})");
        }
    }
}
