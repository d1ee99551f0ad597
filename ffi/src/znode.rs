//! The znode API on a session (the core's `Session::exists`, `get`, `set`,
//! `create`, `delete`, `children`), each call bounded by the core's request
//! bound (the session timeout), so none waits forever: blocking, or
//! callback-completed (`_async`, with a cancel token that abandons the wait).
//! Versions are `i32` with -1 for any version, as ZooKeeper's own.

use std::ffi::c_void;
use std::future::Future;

use zoolock::{runtime, Create, Error, Stat};

use crate::args::{self, UserData};
use crate::cancel::{cancellable, Stops};
use crate::castable;
use crate::dispatch;
use crate::entry::{async_entry, path_entry, Completion};
use crate::session::ZlSession;
use crate::status::{guard, Failure, FfiResult, ZL_OK};

/// The node is deleted when the session that created it ends.
pub const ZL_CREATE_EPHEMERAL: u32 = 1;
/// The server appends a 10-digit sequence number to the name.
pub const ZL_CREATE_SEQUENCE: u32 = 2;
/// Missing parents are created first, empty and persistent (kazoo's `makepath`).
pub const ZL_CREATE_MAKEPATH: u32 = 4;

/// The length that, with a null pointer, stands for a node's null data
/// (ZooKeeper's "no data", kazoo's `None`, the wire's -1), apart from empty
/// data (length 0), in data given and returned: ZooKeeper's C client uses
/// a null buffer of length -1 alike.
pub const ZL_NULL_DATA: u32 = 0xFFFF_FFFF;

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

/// Called once when a callback-completed call (`zl_session_*_async`,
/// `zl_transaction_commit_async`) ends: `status` `ZL_OK` with its result in
/// `data` (the node's data — null data as a null pointer with length
/// `ZL_NULL_DATA` —, the path created, or a list encoded as
/// `zl_session_children` encodes it; empty for the others) and the node's
/// stat in `*stat` (null when the call gives none, and when
/// `zl_session_exists_async` found no node); else an error code with its
/// UTF-8 message. Every pointer is valid only during the call. Runs on
/// zoolock's callback thread, which runs every callback in turn: return quickly.
pub type ZlResultCallback = extern "C" fn(
    user_data: *mut c_void,
    status: i32,
    data: *const u8,
    data_len: u32,
    stat: *const ZlStat,
    message: *const u8,
    message_len: u32,
);

/// What a callback-completed call hands its callback.
pub(crate) struct Reply {
    /// `None`: a node's null data, passed as a null pointer with length `ZL_NULL_DATA`.
    pub(crate) data: Option<Vec<u8>>,
    pub(crate) stat: Option<ZlStat>,
}

impl Reply {
    /// What a call without a result hands its callback: empty data (not null data), no stat.
    pub(crate) fn empty() -> Reply {
        Reply::data(Vec::new())
    }

    /// `data` alone (a path, a list), no stat.
    pub(crate) fn data(data: Vec<u8>) -> Reply {
        Reply { data: Some(data), stat: None }
    }

    /// A yes/no answer (the recipes'): one byte, 1 or 0.
    pub(crate) fn yes_no(answer: bool) -> Reply {
        Reply::data(vec![answer as u8])
    }
}

/// Starts `work` on zoolock's runtime and returns at once; `callback` gets
/// `reply(outcome)` exactly once. A fired `cancel` abandons the work:
/// `ZL_CANCELLED`, naming it as `what`.
pub(crate) fn reply_later<T: Send + 'static>(
    work: impl Future<Output = zoolock::Result<T>> + Send + 'static,
    what: String,
    cancel: Stops,
    callback: ZlResultCallback,
    user_data: UserData,
    reply: impl FnOnce(T) -> Reply + Send + 'static,
) -> FfiResult {
    // In a forked child the runtime's threads are gone: a spawned task would never run.
    runtime::check_process()?;
    let work = cancellable(work, cancel, move || Some(Failure::cancelled(what)));
    dispatch::complete_later(async move { work.await.map(reply) }, move |outcome| {
        let user_data = user_data.get();
        let outcome = outcome.and_then(|reply| match reply.data.as_ref().map(|data| u32::try_from(data.len())) {
            None => Ok((reply, ZL_NULL_DATA)),
            Some(Ok(len)) if len != ZL_NULL_DATA => Ok((reply, len)),
            Some(_) => Err(Failure::invalid("the result is over 4 GiB")),
        });
        match outcome {
            Ok((reply, len)) => {
                let stat = reply.stat.as_ref().map_or(std::ptr::null(), |stat| stat as *const ZlStat);
                let data = reply.data.as_ref().map_or(std::ptr::null(), |data| data.as_ptr());
                callback(user_data, ZL_OK, data, len, stat, std::ptr::null(), 0)
            }
            Err(failure) => {
                let message = failure.message.as_bytes();
                let (data, stat) = (std::ptr::null(), std::ptr::null());
                callback(user_data, failure.code, data, 0, stat, message.as_ptr(), message.len() as u32)
            }
        }
    });
    Ok(())
}

path_entry! {
    /// Whether the node exists: `*out_found` 1 and its stat in `*out_stat`
    /// (may be null), or 0 and the stat untouched.
    ///
    /// # Safety
    /// `session` must be a live handle; the byte range valid; `out_found` valid
    /// for writes, `out_stat` null or valid for writes.
    fn zl_session_exists(session: *const ZlSession, path, out_found: *mut u8, out_stat: *mut ZlStat) |session, path| {
        args::need(out_found, "out_found")?;
        let stat = runtime::wait(session.exists(path))?;
        if let Some(stat) = stat {
            put_stat(out_stat, stat);
        }
        args::put(out_found, stat.is_some() as u8, "out_found")
    }
}

path_entry! {
    /// The node's data, to free with `zl_bytes_free`, and its stat (`out_stat`
    /// may be null); null data as a null pointer with length `ZL_NULL_DATA`.
    /// `ZL_NO_NODE` if there is no such node.
    ///
    /// # Safety
    /// `session` must be a live handle; the byte range valid; out-pointers valid
    /// for writes (`out_stat` may be null).
    fn zl_session_get(
        session: *const ZlSession, path, out_ptr: *mut *mut u8, out_len: *mut u32, out_stat: *mut ZlStat
    ) |session, path| {
        give_read(out_ptr, out_len, out_stat, "data", || Ok(runtime::wait(session.get(path))?))
    }
}

path_entry! {
    /// Replaces the node's data (null data: a null pointer with length
    /// `ZL_NULL_DATA`) if it is at `version` (-1: any version); its new stat in
    /// `*out_stat` (may be null). `ZL_BAD_VERSION`, `ZL_NO_NODE`.
    ///
    /// # Safety
    /// `session` must be a live handle; the byte ranges valid; `out_stat` null or valid for writes.
    fn zl_session_set(
        session: *const ZlSession, path, data: *const u8, data_len: u32, version: i32, out_stat: *mut ZlStat
    ) |session, path| {
        let data = args::data(data, data_len, "data")?;
        let stat = runtime::wait(session.set(path, data, Some(version)))?;
        put_stat(out_stat, stat);
        Ok(())
    }
}

path_entry! {
    /// Creates a node (`flags`: `ZL_CREATE_*`, 0 for a persistent node whose
    /// parent exists) with the session's ACL and `data` (null data: a null
    /// pointer with length `ZL_NULL_DATA`). The path created (with its
    /// sequence number, if sequential) as UTF-8 to free with `zl_bytes_free`,
    /// its stat in `*out_stat` (may be null). `ZL_NODE_EXISTS`; `ZL_NO_NODE`
    /// when the parent is missing without `ZL_CREATE_MAKEPATH`.
    ///
    /// # Safety
    /// `session` must be a live handle; the byte ranges valid; out-pointers valid
    /// for writes (`out_stat` may be null).
    fn zl_session_create(
        session: *const ZlSession, path, data: *const u8, data_len: u32, flags: u32, out_path_ptr: *mut *mut u8,
        out_path_len: *mut u32, out_stat: *mut ZlStat
    ) |session, path| {
        let data = args::data(data, data_len, "data")?;
        let options = create_options(flags)?;
        args::need(out_path_ptr, "out_path_ptr")?;
        args::need(out_path_len, "out_path_len")?;
        let (created, stat) = runtime::wait(async move { session.create(path, data, &options).await })?;
        args::give(created.into_bytes(), out_path_ptr, out_path_len, "path")?;
        put_stat(out_stat, stat);
        Ok(())
    }
}

path_entry! {
    /// Deletes the node if it is at `version` (-1: any version). `recursive` 1
    /// deletes its descendants first, as kazoo does: not atomically, and a node
    /// already gone is no error. `ZL_NO_NODE`, `ZL_BAD_VERSION`, `ZL_NOT_EMPTY`.
    ///
    /// # Safety
    /// `session` must be a live handle; the byte range valid.
    fn zl_session_delete(session: *const ZlSession, path, version: i32, recursive: u8) |session, path| {
        let recursive = args::flag(recursive, "recursive")?;
        Ok(runtime::wait(session.delete(path, Some(version), recursive))?)
    }
}

path_entry! {
    /// The names of the node's children, unsorted, as a list (each a
    /// little-endian u32 length, then UTF-8; `zl_holder_queue`'s encoding) to
    /// free with `zl_bytes_free`; the node's stat in `*out_stat` (may be null).
    ///
    /// # Safety
    /// `session` must be a live handle; the byte range valid; out-pointers valid
    /// for writes (`out_stat` may be null).
    fn zl_session_children(
        session: *const ZlSession, path, out_ptr: *mut *mut u8, out_len: *mut u32, out_stat: *mut ZlStat
    ) |session, path| {
        give_read(out_ptr, out_len, out_stat, "children", || {
            let (children, stat) = runtime::wait(session.children_and_stat(path))?;
            Ok((Some(args::encode_list(&children)), stat))
        })
    }
}

/// A blocking read's answer: the bytes (the data, the children, the ACL:
/// `what`) to `out_ptr`/`out_len` (null data as `ZL_NULL_DATA`), the stat
/// to `out_stat` (may be null); the out-pointers checked before the read.
///
/// # Safety
/// Out-pointers valid for writes (`out_stat` may be null).
unsafe fn give_read(
    out_ptr: *mut *mut u8,
    out_len: *mut u32,
    out_stat: *mut ZlStat,
    what: &str,
    read: impl FnOnce() -> FfiResult<(Option<Vec<u8>>, Stat)>,
) -> FfiResult {
    args::need(out_ptr, "out_ptr")?;
    args::need(out_len, "out_len")?;
    let (bytes, stat) = read()?;
    args::give_data(bytes, out_ptr, out_len, what)?;
    put_stat(out_stat, stat);
    Ok(())
}

/// An `_async` call on the node at `path` of `session`: `start` checks the
/// call's other arguments and makes its work from a clone of the session
/// and the path; `reply` turns the work's result into the callback's. A
/// fired `cancel` ends it as "`verb` <path>" cancelled.
///
/// # Safety
/// As for `zl_session_exists_async`.
#[allow(clippy::too_many_arguments)]
unsafe fn on_node_later<T, F>(
    session: *const ZlSession,
    path: *const u8,
    path_len: u32,
    verb: &str,
    completion: Completion,
    start: impl FnOnce(zoolock::Session, String) -> FfiResult<F>,
    reply: impl FnOnce(T) -> Reply + Send + 'static,
) -> i32
where
    T: Send + 'static,
    F: std::future::Future<Output = zoolock::Result<T>> + Send + 'static,
{
    guard(|| {
        let session = castable::borrow(session)?.session.clone();
        let path = node_path(path, path_len)?.to_owned();
        let what = format!("{verb} {path}");
        let work = start(session, path)?;
        completion.start(work, what, reply)
    })
}

async_entry! {
    /// `zl_session_exists`, completed by `callback` (`ZlResultCallback`): the
    /// stat, or a null stat if there is no node. Returns at once; the callback is
    /// called exactly once, if and only if this returns `ZL_OK`. `cancel` (may be
    /// null) abandons the wait: `ZL_CANCELLED`. The session and `cancel` must
    /// stay alive until the callback has run.
    ///
    /// # Safety
    /// `session` must be a live handle; the byte range valid; `cancel` null or
    /// live; `user_data` must stay valid until the callback.
    fn zl_session_exists_async(session: *const ZlSession, path: *const u8, path_len: u32) |completion| {
        on_node_later(session, path, path_len, "exists", completion,
            |session, path| Ok(async move { session.exists(&path).await }),
            |stat| Reply { data: Some(Vec::new()), stat: stat.map(ZlStat::from) },
        )
    }
}

async_entry! {
    /// `zl_session_get`, completed by `callback`: the node's data and its stat.
    /// As `zl_session_exists_async` otherwise.
    ///
    /// # Safety
    /// As for `zl_session_exists_async`.
    fn zl_session_get_async(session: *const ZlSession, path: *const u8, path_len: u32) |completion| {
        on_node_later(session, path, path_len, "get", completion,
            |session, path| Ok(async move { session.get(&path).await }),
            |(data, stat)| Reply { data, stat: Some(stat.into()) },
        )
    }
}

async_entry! {
    /// `zl_session_set`, completed by `callback`: the node's new stat. As
    /// `zl_session_exists_async` otherwise; a write already sent when `cancel`
    /// fires may still be made.
    ///
    /// # Safety
    /// As for `zl_session_exists_async`; the data range valid.
    fn zl_session_set_async(
        session: *const ZlSession,
        path: *const u8,
        path_len: u32,
        data: *const u8,
        data_len: u32,
        version: i32,
    ) |completion| {
        on_node_later(session, path, path_len, "set", completion,
            |session, path| {
                let data = args::data(data, data_len, "data")?.map(<[u8]>::to_vec);
                Ok(async move { session.set(&path, data.as_deref(), Some(version)).await })
            },
            |stat| Reply { data: Some(Vec::new()), stat: Some(stat.into()) },
        )
    }
}

async_entry! {
    /// `zl_session_create`, completed by `callback`: the path created (with its
    /// sequence number, if sequential) as `data`, and its stat. As
    /// `zl_session_exists_async` otherwise; a create already sent when `cancel`
    /// fires may still be made.
    ///
    /// # Safety
    /// As for `zl_session_exists_async`; the data range valid.
    fn zl_session_create_async(
        session: *const ZlSession,
        path: *const u8,
        path_len: u32,
        data: *const u8,
        data_len: u32,
        flags: u32,
    ) |completion| {
        on_node_later(session, path, path_len, "create", completion,
            |session, path| {
                let data = args::data(data, data_len, "data")?.map(<[u8]>::to_vec);
                let options = create_options(flags)?;
                Ok(async move { session.create(&path, data.as_deref(), &options).await })
            },
            |(created, stat)| Reply { data: Some(created.into_bytes()), stat: Some(stat.into()) },
        )
    }
}

async_entry! {
    /// `zl_session_delete`, completed by `callback` (no data, no stat). As
    /// `zl_session_exists_async` otherwise; a delete already sent when `cancel`
    /// fires may still be made.
    ///
    /// # Safety
    /// As for `zl_session_exists_async`.
    fn zl_session_delete_async(
        session: *const ZlSession,
        path: *const u8,
        path_len: u32,
        version: i32,
        recursive: u8,
    ) |completion| {
        on_node_later(session, path, path_len, "delete", completion,
            |session, path| {
                let recursive = args::flag(recursive, "recursive")?;
                Ok(async move { session.delete(&path, Some(version), recursive).await })
            },
            |()| Reply::empty(),
        )
    }
}

async_entry! {
    /// `zl_session_children`, completed by `callback`: the children's names as
    /// a list (`zl_session_children`'s encoding) in `data`, and the node's stat.
    /// As `zl_session_exists_async` otherwise.
    ///
    /// # Safety
    /// As for `zl_session_exists_async`.
    fn zl_session_children_async(session: *const ZlSession, path: *const u8, path_len: u32) |completion| {
        on_node_later(session, path, path_len, "children of", completion,
            |session, path| Ok(async move { session.children_and_stat(&path).await }),
            |(children, stat)| Reply { data: Some(args::encode_list(&children)), stat: Some(stat.into()) },
        )
    }
}

/// Checks `path` as the core does before any network call, without a
/// session: a node path (`lock_path` 0: the rule of the znode calls) or a
/// lock path (1: also neither the root nor under `/zookeeper`). `ZL_OK`, or
/// `ZL_INVALID_PATH` with the reason.
///
/// # Safety
/// The byte range must be valid.
#[no_mangle]
pub unsafe extern "C" fn zl_path_check(path: *const u8, path_len: u32, lock_path: u8) -> i32 {
    guard(|| match lock_path {
        0 => Ok(zoolock::validate_node_path(node_path(path, path_len)?)?),
        1 => Ok(zoolock::path_from_utf8(args::bytes(path, path_len, "path")?).map(|_| ())?),
        other => Err(Failure::invalid(format!("lock_path must be 0 or 1, got {other}"))),
    })
}

/// Adds credentials to the running session (ZooKeeper's `addauth`, kazoo's
/// `add_auth`): `scheme` UTF-8 (`digest`), `credentials` bytes
/// (`user:password`). Accepted ones are sent again by the sessions opened
/// after an expiry. `ZL_AUTH_FAILED` if the server refuses them.
///
/// # Safety
/// `session` must be a live handle; the byte ranges valid.
#[no_mangle]
pub unsafe extern "C" fn zl_session_add_auth(
    session: *const ZlSession,
    scheme: *const u8,
    scheme_len: u32,
    credentials: *const u8,
    credentials_len: u32,
) -> i32 {
    guard(|| {
        let session = &castable::borrow(session)?.session;
        let scheme = args::text(scheme, scheme_len, "scheme")?;
        let credentials = args::bytes(credentials, credentials_len, "credentials")?;
        Ok(runtime::wait(session.add_auth(scheme, credentials))?)
    })
}

path_entry! {
    /// The node's ACL as a list (`zl_session_children`'s encoding) of three
    /// items per entry: the permission bits in decimal, the scheme, the id; to
    /// free with `zl_bytes_free`. Its stat in `*out_stat` (may be null). `ZL_NO_NODE`.
    ///
    /// # Safety
    /// `session` must be a live handle; the byte range valid; out-pointers valid
    /// for writes (`out_stat` may be null).
    fn zl_session_get_acls(
        session: *const ZlSession, path, out_ptr: *mut *mut u8, out_len: *mut u32, out_stat: *mut ZlStat
    ) |session, path| {
        give_read(out_ptr, out_len, out_stat, "acls", || {
            let (acls, stat) = runtime::wait(session.get_acls(path))?;
            Ok((Some(encode_acls(&acls)), stat))
        })
    }
}

/// An ACL in `zl_session_get_acls`'s encoding.
fn encode_acls(acls: &[zoolock::Acl]) -> Vec<u8> {
    let items: Vec<String> = acls
        .iter()
        .flat_map(|a| [zoolock::permission_bits(a.permission()).to_string(), a.scheme().into(), a.id().into()])
        .collect();
    args::encode_list(&items)
}

/// An ACL from `zl_session_get_acls`'s encoding.
///
/// # Safety
/// As for [`args::bytes`].
unsafe fn decode_acls(acls: *const u8, acls_len: u32) -> FfiResult<Vec<zoolock::Acl>> {
    let items = args::decode_list(args::bytes(acls, acls_len, "acls")?, "acls")?;
    if items.len() % 3 != 0 {
        return Err(Failure::invalid("acls: three items per entry (permissions, scheme, id)"));
    }
    items
        .chunks(3)
        .map(|entry| {
            let bits = entry[0].parse().map_err(|_| Failure::invalid(format!("acls: permissions {:?}", entry[0])))?;
            Ok(zoolock::Acl::new(crate::options::permission(bits)?, zoolock::AuthId::new(entry[1], entry[2])))
        })
        .collect()
}

path_entry! {
    /// Replaces the node's ACL if its ACL is at `version` (its `aversion`; -1:
    /// any): `acls` in `zl_session_get_acls`'s encoding. Its new stat in
    /// `*out_stat` (may be null). `ZL_BAD_VERSION`, `ZL_NO_NODE`,
    /// `ZL_INVALID_ACL` (also for an empty list), `ZL_NO_AUTH`.
    ///
    /// # Safety
    /// `session` must be a live handle; the byte ranges valid; `out_stat` null or valid for writes.
    fn zl_session_set_acls(
        session: *const ZlSession, path, acls: *const u8, acls_len: u32, version: i32, out_stat: *mut ZlStat
    ) |session, path| {
        let acls = decode_acls(acls, acls_len)?;
        let stat = runtime::wait(async move { session.set_acls(path, &acls, Some(version)).await })?;
        put_stat(out_stat, stat);
        Ok(())
    }
}

async_entry! {
    /// `zl_session_add_auth`, completed by `callback` (no data, no stat). As
    /// `zl_session_exists_async` otherwise.
    ///
    /// # Safety
    /// As for `zl_session_exists_async`; the byte ranges valid.
    fn zl_session_add_auth_async(
        session: *const ZlSession,
        scheme: *const u8,
        scheme_len: u32,
        credentials: *const u8,
        credentials_len: u32,
    ) |completion| {
        guard(|| {
            let session = castable::borrow(session)?.session.clone();
            let scheme = args::text(scheme, scheme_len, "scheme")?.to_owned();
            let credentials = args::bytes(credentials, credentials_len, "credentials")?.to_vec();
            let what = format!("add auth {scheme}");
            let work = async move { session.add_auth(&scheme, &credentials).await };
            completion.start(work, what, |()| Reply::empty())
        })
    }
}

async_entry! {
    /// `zl_session_get_acls`, completed by `callback`: the ACL in its encoding
    /// as `data`, and the node's stat. As `zl_session_exists_async` otherwise.
    ///
    /// # Safety
    /// As for `zl_session_exists_async`.
    fn zl_session_get_acls_async(session: *const ZlSession, path: *const u8, path_len: u32) |completion| {
        on_node_later(session, path, path_len, "get the ACL of", completion,
            |session, path| Ok(async move { session.get_acls(&path).await }),
            |(acls, stat)| Reply { data: Some(encode_acls(&acls)), stat: Some(stat.into()) },
        )
    }
}

async_entry! {
    /// `zl_session_set_acls`, completed by `callback`: the node's new stat. As
    /// `zl_session_exists_async` otherwise; a write already sent when `cancel`
    /// fires may still be made.
    ///
    /// # Safety
    /// As for `zl_session_exists_async`; the ACL range valid.
    fn zl_session_set_acls_async(
        session: *const ZlSession,
        path: *const u8,
        path_len: u32,
        acls: *const u8,
        acls_len: u32,
        version: i32,
    ) |completion| {
        on_node_later(session, path, path_len, "set the ACL of", completion,
            |session, path| {
                let acls = decode_acls(acls, acls_len)?;
                Ok(async move { session.set_acls(&path, &acls, Some(version)).await })
            },
            |stat| Reply { data: Some(Vec::new()), stat: Some(stat.into()) },
        )
    }
}
