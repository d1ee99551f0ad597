//! Reading arguments from C and writing results back: UTF-8 strings as
//! pointer + length, out-pointers checked for null, timeouts in
//! milliseconds, and byte buffers handed to the caller (freed with
//! `zl_bytes_free`).

use std::ffi::c_void;
use std::time::Duration;

use crate::status::{guard_void, Failure, FfiResult};

/// A C caller's `void *user_data`, carried to the thread that calls back.
#[derive(Clone, Copy)]
pub struct UserData(pub *mut c_void);

// SAFETY: zoolock never dereferences it; the caller promised, by passing it
// with a callback, that the callback may receive it on any thread.
unsafe impl Send for UserData {}
unsafe impl Sync for UserData {}

impl UserData {
    /// The pointer (a method, so that closures capture the `Send` wrapper).
    pub fn get(self) -> *mut c_void {
        self.0
    }
}

/// The bytes at `ptr`; a null `ptr` is accepted only with `len == 0`.
///
/// # Safety
/// `ptr` must be valid for `len` bytes for the duration of the call.
pub unsafe fn bytes<'a>(ptr: *const u8, len: u32, what: &str) -> FfiResult<&'a [u8]> {
    if ptr.is_null() {
        return if len == 0 {
            Ok(&[])
        } else {
            Err(Failure::invalid(format!("{what}: null pointer with length {len}")))
        };
    }
    Ok(std::slice::from_raw_parts(ptr, len as usize))
}

/// Node data: the bytes at `ptr`, or `None` (null data) for a null pointer
/// with length [`ZL_NULL_DATA`](crate::ZL_NULL_DATA).
///
/// # Safety
/// As for [`bytes`].
pub unsafe fn data<'a>(ptr: *const u8, len: u32, what: &str) -> FfiResult<Option<&'a [u8]>> {
    match (ptr.is_null(), len == crate::ZL_NULL_DATA) {
        (true, true) => Ok(None),
        (false, true) => Err(Failure::invalid(format!("{what}: length ZL_NULL_DATA (null data) needs a null pointer"))),
        (_, false) => bytes(ptr, len, what).map(Some),
    }
}

/// The UTF-8 text at `ptr`.
///
/// # Safety
/// As for [`bytes`].
pub unsafe fn text<'a>(ptr: *const u8, len: u32, what: &str) -> FfiResult<&'a str> {
    std::str::from_utf8(bytes(ptr, len, what)?).map_err(|e| Failure::invalid(format!("{what} is not UTF-8: {e}")))
}

/// Writes `value` through an out-pointer.
///
/// # Safety
/// A non-null `ptr` must be valid for writes.
pub unsafe fn put<T>(ptr: *mut T, value: T, what: &str) -> FfiResult {
    if ptr.is_null() {
        return Err(Failure::invalid(format!("{what}: null out-pointer")));
    }
    ptr.write(value);
    Ok(())
}

/// Checks an out-pointer before any work is done.
/// A C boolean: 0 or 1, anything else refused by name.
pub fn flag(value: u8, what: &str) -> FfiResult<bool> {
    match value {
        0 | 1 => Ok(value == 1),
        other => Err(Failure::invalid(format!("{what} must be 0 or 1, got {other}"))),
    }
}

pub fn need<T>(ptr: *mut T, what: &str) -> FfiResult {
    if ptr.is_null() {
        return Err(Failure::invalid(format!("{what}: null out-pointer")));
    }
    Ok(())
}

/// A timeout in milliseconds: `-1` waits forever, `0` tries once.
pub fn timeout(ms: i64, what: &str) -> FfiResult<Option<Duration>> {
    match ms {
        -1 => Ok(None),
        ms if ms < 0 => Err(Failure::invalid(format!("{what} must be -1 (forever) or at least 0 ms, got {ms}"))),
        ms => Ok(Some(Duration::from_millis(ms as u64))),
    }
}

/// Hands `data` to the caller, who frees it with `zl_bytes_free(ptr, len)`.
///
/// # Safety
/// Both out-pointers must be valid for writes (checked for null).
pub unsafe fn give(data: Vec<u8>, out_ptr: *mut *mut u8, out_len: *mut u32, what: &str) -> FfiResult {
    need(out_ptr, what)?;
    need(out_len, what)?;
    let len = u32::try_from(data.len()).map_err(|_| Failure::invalid(format!("{what}: result over 4 GiB")))?;
    let ptr = Box::into_raw(data.into_boxed_slice()) as *mut u8;
    out_ptr.write(ptr);
    out_len.write(len);
    Ok(())
}

/// [`give`] for node data: null data as a null pointer with length
/// [`ZL_NULL_DATA`](crate::ZL_NULL_DATA).
///
/// # Safety
/// As for [`give`].
pub unsafe fn give_data(data: Option<Vec<u8>>, out_ptr: *mut *mut u8, out_len: *mut u32, what: &str) -> FfiResult {
    match data {
        Some(data) if data.len() >= crate::ZL_NULL_DATA as usize => {
            Err(Failure::invalid(format!("{what}: result over 4 GiB")))
        }
        Some(data) => give(data, out_ptr, out_len, what),
        None => {
            need(out_ptr, what)?;
            need(out_len, what)?;
            out_ptr.write(std::ptr::null_mut());
            out_len.write(crate::ZL_NULL_DATA);
            Ok(())
        }
    }
}

/// A list of strings as one buffer: each is a little-endian `u32` byte
/// length followed by its UTF-8 bytes.
pub fn encode_list(items: &[String]) -> Vec<u8> {
    let mut buffer = Vec::with_capacity(items.iter().map(|s| s.len() + 4).sum());
    for item in items {
        buffer.extend_from_slice(&(item.len() as u32).to_le_bytes());
        buffer.extend_from_slice(item.as_bytes());
    }
    buffer
}

/// The strings of a buffer in [`encode_list`]'s layout, each UTF-8;
/// `ZL_INVALID_ARGUMENT` naming `what` if it is cut short or not UTF-8.
pub fn decode_list<'a>(buffer: &'a [u8], what: &str) -> FfiResult<Vec<&'a str>> {
    decode_byte_list(buffer, what)?
        .into_iter()
        .map(|item| std::str::from_utf8(item).map_err(|_| Failure::invalid(format!("{what}: an item is not UTF-8"))))
        .collect()
}

/// The byte strings of a buffer in [`encode_list`]'s layout (any bytes);
/// `ZL_INVALID_ARGUMENT` naming `what` if it is cut short.
pub fn decode_byte_list<'a>(mut buffer: &'a [u8], what: &str) -> FfiResult<Vec<&'a [u8]>> {
    let mut items = Vec::new();
    while !buffer.is_empty() {
        let cut = || {
            Failure::invalid(format!("{what}: a list cut short (each item a little-endian u32 length, then its bytes)"))
        };
        let (size, rest) = buffer.split_first_chunk::<4>().ok_or_else(cut)?;
        let size = u32::from_le_bytes(*size) as usize;
        items.push(rest.get(..size).ok_or_else(cut)?);
        buffer = &rest[size..];
    }
    Ok(items)
}

/// Frees a buffer zoolock handed out (`zl_holder_queue`, `zl_lock_node`).
/// Null is ignored.
///
/// # Safety
/// `ptr` and `len` must be exactly as zoolock returned them, freed once.
#[no_mangle]
pub unsafe extern "C" fn zl_bytes_free(ptr: *mut u8, len: u32) {
    guard_void(|| {
        if !ptr.is_null() {
            drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len as usize)));
        }
    })
}

/// A record buffer for the caller to decode: texts as a little-endian `u32`
/// byte length then UTF-8, numbers little-endian, in the order the entry
/// point documents.
#[derive(Default)]
pub struct Record(pub Vec<u8>);

impl Record {
    pub fn text(&mut self, text: &str) -> &mut Record {
        self.0.extend_from_slice(&(text.len() as u32).to_le_bytes());
        self.0.extend_from_slice(text.as_bytes());
        self
    }

    pub fn i64(&mut self, value: i64) -> &mut Record {
        self.0.extend_from_slice(&value.to_le_bytes());
        self
    }

    pub fn i32(&mut self, value: i32) -> &mut Record {
        self.0.extend_from_slice(&value.to_le_bytes());
        self
    }

    pub fn f64(&mut self, value: f64) -> &mut Record {
        self.0.extend_from_slice(&value.to_le_bytes());
        self
    }

    pub fn u8(&mut self, value: u8) -> &mut Record {
        self.0.push(value);
        self
    }
}
