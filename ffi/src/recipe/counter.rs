//! The core's `Counter` (kazoo's node format) as `ZlCounter`. Blocking
//! calls and callback-completed ones (`_async`), each cancellable through a
//! `ZlCancel` (a change cancelled after its write was sent may still have
//! been made, as one whose reply was lost).

use zoolock::{runtime, Counter, CounterFormat, CounterValue};

use crate::args;
use crate::cancel::{cancellable, Stops, ZlCancel};
use crate::castable;
use crate::entry::{async_entry, new_entry};
use crate::recipe::{call_later, impl_recipe};
use crate::status::{guard, guard_void, Failure, FfiResult};
use crate::znode::Reply;

/// A counter's value: a whole number (`is_float` 0, `int_value`) or a
/// floating-point one (`is_float` 1, `float_value`), kazoo's `int` or `float`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ZlCounterValue {
    pub is_float: u8,
    pub int_value: i64,
    pub float_value: f64,
}

impl From<CounterValue> for ZlCounterValue {
    fn from(value: CounterValue) -> Self {
        match value {
            CounterValue::Int(v) => ZlCounterValue { is_float: 0, int_value: v, float_value: 0.0 },
            CounterValue::Float(v) => ZlCounterValue { is_float: 1, int_value: 0, float_value: v },
        }
    }
}

impl ZlCounterValue {
    fn core(&self, what: &str) -> FfiResult<CounterValue> {
        match self.is_float {
            0 => Ok(CounterValue::Int(self.int_value)),
            1 => Ok(CounterValue::Float(self.float_value)),
            other => Err(Failure::invalid(format!("{what}.is_float must be 0 or 1, got {other}"))),
        }
    }
}

/// A counter on one node (kazoo's `Counter`).
pub struct ZlCounter {
    counter: Counter,
}

impl_recipe!(ZlCounter, counter: Counter, "counter");

/// `zl_counter_new` format: kazoo's text (Python's `repr` of the value).
pub const ZL_COUNTER_KAZOO: i32 = 0;
/// `zl_counter_new` format: Curator's `SharedCount` (4 big-endian bytes, whole numbers of 32 bits).
pub const ZL_COUNTER_CURATOR: i32 = 1;

new_entry! {
    /// Creates a counter on `path` whose empty node reads as `*default`; its
    /// type (whole or floating) is the counter's, and every change must be of
    /// it. `format` is `ZL_COUNTER_KAZOO` or `ZL_COUNTER_CURATOR`. Nothing is sent yet.
    ///
    /// # Safety
    /// `session` must be a live handle; the byte range and `default` valid; `out_counter` valid for writes.
    fn zl_counter_new(
        session, path, default: *const ZlCounterValue, format: i32
    ) -> out_counter: ZlCounter |session, path| {
        let default = default.as_ref().ok_or_else(|| Failure::invalid("default is null"))?.core("default")?;
        let format = match format {
            ZL_COUNTER_KAZOO => CounterFormat::Kazoo,
            ZL_COUNTER_CURATOR => CounterFormat::Curator,
            other => return Err(Failure::invalid(format!("unknown counter format {other}"))),
        };
        let counter = Counter::with_format(session, path, default, format)?;
        Ok(ZlCounter { counter })
    }
}

/// The value now, creating the node (empty: the default) if missing.
///
/// # Safety
/// `counter` must be a live handle; `cancel` null or live; `out_value` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_counter_value(
    counter: *const ZlCounter,
    cancel: *const ZlCancel,
    out_value: *mut ZlCounterValue,
) -> i32 {
    guard(|| {
        let counter = castable::borrow(counter)?.counter.clone();
        args::need(out_value, "out_value")?;
        let cancel = Stops::new(cancel.as_ref());
        let work = async move { counter.value().await };
        let value = runtime::wait(cancellable(work, cancel, || Some(Failure::cancelled("counter read"))))?;
        args::put(out_value, value.into(), "out_value")
    })
}

/// Adds `*delta` (of the counter's type): `*out_pre` and `*out_post` (each
/// may be null) are the values before and after (kazoo's `pre_value`,
/// `post_value`). `ZL_INVALID_ARGUMENT` for another type or a result out of
/// range, `ZL_BAD_DATA` if the node holds something else; `ZL_CONNECTION_LOSS`
/// when a write whose reply was lost may or may not have been made (never
/// made twice).
///
/// # Safety
/// `counter` must be a live handle; `delta` valid; `cancel` null or live; out-pointers null or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_counter_add(
    counter: *const ZlCounter,
    delta: *const ZlCounterValue,
    cancel: *const ZlCancel,
    out_pre: *mut ZlCounterValue,
    out_post: *mut ZlCounterValue,
) -> i32 {
    guard(|| {
        let counter = castable::borrow(counter)?.counter.clone();
        let delta = delta.as_ref().ok_or_else(|| Failure::invalid("delta is null"))?.core("delta")?;
        let cancel = Stops::new(cancel.as_ref());
        let work = async move { counter.add(delta).await };
        let change = runtime::wait(cancellable(work, cancel, || Some(Failure::cancelled("counter change"))))?;
        if !out_pre.is_null() {
            out_pre.write(change.pre_value.into());
        }
        if !out_post.is_null() {
            out_post.write(change.post_value.into());
        }
        Ok(())
    })
}

/// Sets the value to `*new` if it is `*expected` now (Curator's
/// `compareAndSet`): `*out_set` 1 if set, 0 (nothing changed) if it was
/// another. Both of the counter's type, else `ZL_INVALID_ARGUMENT`; a lost
/// reply as for `zl_counter_add`.
///
/// # Safety
/// `counter` must be a live handle; `expected` and `new` valid; `cancel` null or live; `out_set` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_counter_compare_and_set(
    counter: *const ZlCounter,
    expected: *const ZlCounterValue,
    new: *const ZlCounterValue,
    cancel: *const ZlCancel,
    out_set: *mut u8,
) -> i32 {
    guard(|| {
        let counter = castable::borrow(counter)?.counter.clone();
        let work = compare_and_set(counter, expected, new)?;
        args::need(out_set, "out_set")?;
        let cancel = Stops::new(cancel.as_ref());
        let set = runtime::wait(cancellable(work, cancel, || Some(Failure::cancelled("counter change"))))?;
        args::put(out_set, set as u8, "out_set")
    })
}

/// The compare-and-set of `*expected` to `*new`, its arguments checked.
///
/// # Safety
/// `expected` and `new` null or valid.
unsafe fn compare_and_set(
    counter: Counter,
    expected: *const ZlCounterValue,
    new: *const ZlCounterValue,
) -> FfiResult<impl std::future::Future<Output = zoolock::Result<bool>>> {
    let expected = expected.as_ref().ok_or_else(|| Failure::invalid("expected is null"))?.core("expected")?;
    let new = new.as_ref().ok_or_else(|| Failure::invalid("new is null"))?.core("new")?;
    Ok(async move { counter.compare_and_set(expected, new).await })
}

/// A counter value in a callback's data: `is_float` (u8), then the whole
/// value (i64) and the floating one (f64), little-endian: 17 bytes.
fn record(values: &[CounterValue]) -> Vec<u8> {
    let mut record = args::Record::default();
    for value in values {
        let value = ZlCounterValue::from(*value);
        record.u8(value.is_float).i64(value.int_value).f64(value.float_value);
    }
    record.0
}

async_entry! {
    /// `zl_counter_value`, completed by `callback` (`ZlResultCallback`): the
    /// value as 17 bytes of data (`is_float` u8, `int_value` i64, `float_value`
    /// f64, little-endian). Returns at once; the callback is called exactly
    /// once, if and only if this returns `ZL_OK`; a fired `cancel` ends it with
    /// `ZL_CANCELLED`. The counter and `cancel` must stay alive until the callback.
    ///
    /// # Safety
    /// `counter` must be a live handle; `cancel` null or live; `user_data` valid until the callback.
    fn zl_counter_value_async(counter: *const ZlCounter) |completion| {
        let start = |counter: Counter| Ok(async move { counter.value().await });
        call_later(counter, "read", start, |value| Reply::data(record(&[value])), completion)
    }
}

async_entry! {
    /// `zl_counter_add`, completed by `callback`: the values before and after
    /// as two of `zl_counter_value_async`'s records (34 bytes). As
    /// `zl_counter_value_async` otherwise; a change cancelled after its write
    /// was sent may still have been made.
    ///
    /// # Safety
    /// As for `zl_counter_value_async`; `delta` valid during the call.
    fn zl_counter_add_async(counter: *const ZlCounter, delta: *const ZlCounterValue) |completion| {
        let start = |counter: Counter| {
            let delta = delta.as_ref().ok_or_else(|| Failure::invalid("delta is null"))?.core("delta")?;
            Ok(async move { counter.add(delta).await })
        };
        let reply = |change: zoolock::CounterChange| Reply::data(record(&[change.pre_value, change.post_value]));
        call_later(counter, "change", start, reply, completion)
    }
}

async_entry! {
    /// `zl_counter_compare_and_set`, completed by `callback`: one byte, 1 if
    /// set. As `zl_counter_value_async` otherwise; a set cancelled after its
    /// write was sent may still have been made.
    ///
    /// # Safety
    /// As for `zl_counter_value_async`; `expected` and `new` valid during the call.
    fn zl_counter_compare_and_set_async(
        counter: *const ZlCounter,
        expected: *const ZlCounterValue,
        new: *const ZlCounterValue,
    ) |completion| {
        let start = |counter: Counter| compare_and_set(counter, expected, new);
        call_later(counter, "compare and set", start, Reply::yes_no, completion)
    }
}

/// Frees the counter. Null is ignored.
///
/// # Safety
/// `counter` must come from `zl_counter_new`, freed once, with no call on it in flight.
#[no_mangle]
pub unsafe extern "C" fn zl_counter_free(counter: *mut ZlCounter) {
    guard_void(|| castable::free(counter))
}
