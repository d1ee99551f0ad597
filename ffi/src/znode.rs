//! The znode API on a session (the core's `Session::exists`, `get`, `set`,
//! `create`, `delete`, `children`): blocking calls, each bounded by the
//! core's request bound (the session timeout), so none waits forever.
//! Versions are `i32` with -1 for any version, as ZooKeeper's own.

use zoolock::{runtime, Create, Error, Stat};

use crate::args;
use crate::castable;
use crate::session::ZlSession;
use crate::status::{guard, FfiResult};

/// The node is deleted when the session that created it ends.
pub const ZL_CREATE_EPHEMERAL: u32 = 1;
/// The server appends a 10-digit sequence number to the name.
pub const ZL_CREATE_SEQUENCE: u32 = 2;
/// Missing parents are created first, empty and persistent (kazoo's `makepath`).
pub const ZL_CREATE_MAKEPATH: u32 = 4;

/// A node's metadata (ZooKeeper's `Stat`; the core's `Stat`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ZlStat {
    /// The zxid of the transaction that created the node.
    pub czxid: i64,
    /// The zxid of the transaction that last changed its data.
    pub mzxid: i64,
    /// The zxid of the transaction that last changed its children.
    pub pzxid: i64,
    /// Creation time, milliseconds since the epoch.
    pub ctime: i64,
    /// Last data change, milliseconds since the epoch.
    pub mtime: i64,
    /// The session owning an ephemeral node; 0 for a persistent one.
    pub ephemeral_owner: i64,
    /// Changes to its data: the version a conditional set or delete names.
    pub version: i32,
    /// Changes to its children.
    pub cversion: i32,
    /// Changes to its ACL.
    pub aversion: i32,
    /// The length of its data.
    pub data_length: i32,
    /// How many children it has.
    pub num_children: i32,
}

impl From<Stat> for ZlStat {
    fn from(s: Stat) -> ZlStat {
        ZlStat {
            czxid: s.czxid,
            mzxid: s.mzxid,
            pzxid: s.pzxid,
            ctime: s.ctime,
            mtime: s.mtime,
            ephemeral_owner: s.ephemeral_owner,
            version: s.version,
            cversion: s.cversion,
            aversion: s.aversion,
            data_length: s.data_length,
            num_children: s.num_children,
        }
    }
}

/// A node path as UTF-8; the core checks the rest (a sequential create may end in '/').
///
/// # Safety
/// As for [`args::bytes`].
pub unsafe fn node_path<'a>(ptr: *const u8, len: u32) -> FfiResult<&'a str> {
    let bytes = args::bytes(ptr, len, "path")?;
    std::str::from_utf8(bytes).map_err(|_| {
        Error::InvalidPath { path: String::from_utf8_lossy(bytes).into_owned(), reason: "the path is not UTF-8" }.into()
    })
}

/// The core's create options from `ZL_CREATE_*` flags; unknown bits are refused.
pub fn create_options(flags: u32) -> FfiResult<Create> {
    let known = ZL_CREATE_EPHEMERAL | ZL_CREATE_SEQUENCE | ZL_CREATE_MAKEPATH;
    if flags & !known != 0 {
        return Err(crate::status::Failure::invalid(format!("unknown create flags {:#x}", flags & !known)));
    }
    Ok(Create {
        ephemeral: flags & ZL_CREATE_EPHEMERAL != 0,
        sequence: flags & ZL_CREATE_SEQUENCE != 0,
        makepath: flags & ZL_CREATE_MAKEPATH != 0,
        acls: None,
    })
}

/// Writes a stat through an out-pointer that may be null.
unsafe fn put_stat(out: *mut ZlStat, stat: Stat) {
    if !out.is_null() {
        out.write(stat.into());
    }
}

/// Whether the node exists: `*out_found` 1 and its stat in `*out_stat`
/// (may be null), or 0 and the stat untouched.
///
/// # Safety
/// `session` must be a live handle; the byte range valid; `out_found` valid
/// for writes, `out_stat` null or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_session_exists(
    session: *const ZlSession,
    path: *const u8,
    path_len: u32,
    out_found: *mut u8,
    out_stat: *mut ZlStat,
) -> i32 {
    guard(|| {
        let session = &castable::borrow(session)?.session;
        let path = node_path(path, path_len)?;
        args::need(out_found, "out_found")?;
        let stat = runtime::block_on(session.exists(path))?;
        if let Some(stat) = stat {
            put_stat(out_stat, stat);
        }
        args::put(out_found, stat.is_some() as u8, "out_found")
    })
}

/// The node's data, to free with `zl_bytes_free`, and its stat (`out_stat`
/// may be null). `ZL_NO_NODE` if there is no such node.
///
/// # Safety
/// `session` must be a live handle; the byte range valid; out-pointers valid
/// for writes (`out_stat` may be null).
#[no_mangle]
pub unsafe extern "C" fn zl_session_get(
    session: *const ZlSession,
    path: *const u8,
    path_len: u32,
    out_ptr: *mut *mut u8,
    out_len: *mut u32,
    out_stat: *mut ZlStat,
) -> i32 {
    guard(|| {
        let session = &castable::borrow(session)?.session;
        let path = node_path(path, path_len)?;
        args::need(out_ptr, "out_ptr")?;
        args::need(out_len, "out_len")?;
        let (data, stat) = runtime::block_on(session.get(path))?;
        args::give(data, out_ptr, out_len, "data")?;
        put_stat(out_stat, stat);
        Ok(())
    })
}

/// Replaces the node's data if it is at `version` (-1: any version); its new
/// stat in `*out_stat` (may be null). `ZL_BAD_VERSION`, `ZL_NO_NODE`.
///
/// # Safety
/// `session` must be a live handle; the byte ranges valid; `out_stat` null or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_session_set(
    session: *const ZlSession,
    path: *const u8,
    path_len: u32,
    data: *const u8,
    data_len: u32,
    version: i32,
    out_stat: *mut ZlStat,
) -> i32 {
    guard(|| {
        let session = &castable::borrow(session)?.session;
        let path = node_path(path, path_len)?;
        let data = args::bytes(data, data_len, "data")?;
        let stat = runtime::block_on(session.set(path, data, Some(version)))?;
        put_stat(out_stat, stat);
        Ok(())
    })
}

/// Creates a node (`flags`: `ZL_CREATE_*`, 0 for a persistent node whose
/// parent exists) with the session's ACL. The path created (with its
/// sequence number, if sequential) as UTF-8 to free with `zl_bytes_free`,
/// its stat in `*out_stat` (may be null). `ZL_NODE_EXISTS`; `ZL_NO_NODE`
/// when the parent is missing without `ZL_CREATE_MAKEPATH`.
///
/// # Safety
/// `session` must be a live handle; the byte ranges valid; out-pointers valid
/// for writes (`out_stat` may be null).
#[no_mangle]
pub unsafe extern "C" fn zl_session_create(
    session: *const ZlSession,
    path: *const u8,
    path_len: u32,
    data: *const u8,
    data_len: u32,
    flags: u32,
    out_path_ptr: *mut *mut u8,
    out_path_len: *mut u32,
    out_stat: *mut ZlStat,
) -> i32 {
    guard(|| {
        let session = &castable::borrow(session)?.session;
        let path = node_path(path, path_len)?;
        let data = args::bytes(data, data_len, "data")?;
        let options = create_options(flags)?;
        args::need(out_path_ptr, "out_path_ptr")?;
        args::need(out_path_len, "out_path_len")?;
        let (created, stat) = runtime::block_on(session.create(path, data, &options))?;
        args::give(created.into_bytes(), out_path_ptr, out_path_len, "path")?;
        put_stat(out_stat, stat);
        Ok(())
    })
}

/// Deletes the node if it is at `version` (-1: any version). `recursive` 1
/// deletes its descendants first, as kazoo does: not atomically, and a node
/// already gone is no error. `ZL_NO_NODE`, `ZL_BAD_VERSION`, `ZL_NOT_EMPTY`.
///
/// # Safety
/// `session` must be a live handle; the byte range valid.
#[no_mangle]
pub unsafe extern "C" fn zl_session_delete(
    session: *const ZlSession,
    path: *const u8,
    path_len: u32,
    version: i32,
    recursive: u8,
) -> i32 {
    guard(|| {
        let session = &castable::borrow(session)?.session;
        let path = node_path(path, path_len)?;
        let recursive = match recursive {
            0 | 1 => recursive == 1,
            other => return Err(crate::status::Failure::invalid(format!("recursive must be 0 or 1, got {other}"))),
        };
        Ok(runtime::block_on(session.delete(path, Some(version), recursive))?)
    })
}

/// The names of the node's children, unsorted, as a list (each a
/// little-endian u32 length, then UTF-8; `zl_holder_queue`'s encoding) to
/// free with `zl_bytes_free`; the node's stat in `*out_stat` (may be null).
///
/// # Safety
/// `session` must be a live handle; the byte range valid; out-pointers valid
/// for writes (`out_stat` may be null).
#[no_mangle]
pub unsafe extern "C" fn zl_session_children(
    session: *const ZlSession,
    path: *const u8,
    path_len: u32,
    out_ptr: *mut *mut u8,
    out_len: *mut u32,
    out_stat: *mut ZlStat,
) -> i32 {
    guard(|| {
        let session = &castable::borrow(session)?.session;
        let path = node_path(path, path_len)?;
        args::need(out_ptr, "out_ptr")?;
        args::need(out_len, "out_len")?;
        let (children, stat) = runtime::block_on(session.children_and_stat(path))?;
        args::give(args::encode_list(&children), out_ptr, out_len, "children")?;
        put_stat(out_stat, stat);
        Ok(())
    })
}
