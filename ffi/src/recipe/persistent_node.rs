//! Curator's `PersistentNode` in its ephemeral mode (the core's): each call
//! is an `_async` entry point completed by a `ZlResultCallback`.

use zoolock::PersistentNode;

use crate::args;
use crate::castable;
use crate::entry::{async_entry, new_entry};
use crate::recipe::{call_later, impl_recipe};
use crate::status::{guard, guard_void};
use crate::znode::Reply;

/// An ephemeral node kept at its path while started.
pub struct ZlPersistentNode {
    node: PersistentNode,
}

impl_recipe!(ZlPersistentNode, node: PersistentNode, "persistent node");

new_entry! {
    /// The node at `path` (its parent made when missing) holding `data`;
    /// nothing is sent before `zl_persistent_node_start_async`.
    ///
    /// # Safety
    /// `session` must be a live handle; the byte ranges valid; `out_node` valid for writes.
    fn zl_persistent_node_new(
        session, path, data: *const u8, data_len: u32
    ) -> out_node: ZlPersistentNode |session, path| {
        let data = args::bytes(data, data_len, "data")?.to_vec();
        Ok(ZlPersistentNode { node: PersistentNode::new(session, path, data)? })
    }
}

async_entry! {
    /// Makes the node and keeps it — made again after a session expiry and
    /// after anyone deletes it — until `zl_persistent_node_close_async`.
    /// Completes once the node is this session's: a node at the path that
    /// another session owns is waited out. Starting again changes nothing.
    ///
    /// # Safety
    /// `node` must be a live handle until the callback; `cancel` null or live;
    /// `user_data` valid until the callback.
    fn zl_persistent_node_start_async(node: *const ZlPersistentNode) |completion| {
        let start = |node: PersistentNode| Ok(async move { node.start().await });
        call_later(node, "start", start, |()| Reply::empty(), completion)
    }
}

async_entry! {
    /// Changes the node's data, and what it is made with from now on (only
    /// this session's node: another's is left as it is).
    ///
    /// # Safety
    /// As for `zl_persistent_node_start_async`; the byte range valid.
    fn zl_persistent_node_set_data_async(node: *const ZlPersistentNode, data: *const u8, data_len: u32) |completion| {
        let start = |node: PersistentNode| {
            let data = args::bytes(data, data_len, "data")?.to_vec();
            Ok(async move { node.set_data(data).await })
        };
        call_later(node, "set data of", start, |()| Reply::empty(), completion)
    }
}

async_entry! {
    /// Stops keeping the node and deletes it: one byte, 1 if it was this session's.
    ///
    /// # Safety
    /// As for `zl_persistent_node_start_async`.
    fn zl_persistent_node_close_async(node: *const ZlPersistentNode) |completion| {
        let start = |node: PersistentNode| Ok(async move { node.close().await });
        call_later(node, "close", start, Reply::yes_no, completion)
    }
}

/// `*out_started` 1 while it is started and not closed.
///
/// # Safety
/// `node` must be a live handle; `out_started` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_persistent_node_started(node: *const ZlPersistentNode, out_started: *mut u8) -> i32 {
    guard(|| {
        let started = castable::borrow(node)?.node.is_started();
        args::put(out_started, started as u8, "out_started")
    })
}

/// Frees the handle. A node started and not closed stays until its session
/// ends, no longer made again. Null is ignored.
///
/// # Safety
/// `node` must come from `zl_persistent_node_new`, freed once, with no call on it in flight.
#[no_mangle]
pub unsafe extern "C" fn zl_persistent_node_free(node: *mut ZlPersistentNode) {
    guard_void(|| castable::free(node))
}
