//! kazoo's `Party` and `ShallowParty` (the core's `Party`): membership
//! calls are `_async` entry points completed by a `ZlResultCallback`.

use zoolock::Party;

use crate::args;
use crate::castable;
use crate::entry::{async_entry, new_entry};
use crate::recipe::{call_later, impl_recipe};
use crate::status::{guard, guard_void};
use crate::znode::Reply;

/// A member of a party.
pub struct ZlParty {
    party: Party,
}

impl_recipe!(ZlParty, party: Party, "party");

new_entry! {
    /// A member of the party at `path` with `identifier`: kazoo's `Party`
    /// (`shallow` 0: node `<uuid4 hex>__party__` holding the identifier) or
    /// `ShallowParty` (`shallow` 1: node `<uuid4 hex>-<identifier>`, so no '/').
    /// Nothing is sent before `zl_party_join_async`.
    ///
    /// # Safety
    /// `session` must be a live handle; the byte ranges valid; `out_party` valid for writes.
    fn zl_party_new(
        session, path, identifier: *const u8, identifier_len: u32, shallow: u8
    ) -> out_party: ZlParty |session, path| {
        let identifier = args::text(identifier, identifier_len, "identifier")?;
        let party = if shallow != 0 {
            Party::shallow(session, path, identifier)?
        } else {
            Party::new(session, path, identifier)?
        };
        Ok(ZlParty { party })
    }
}

async_entry! {
    /// Joins (empty data); the member joins again on each new session until it leaves.
    ///
    /// # Safety
    /// `party` must be a live handle until the callback; `cancel` null or live;
    /// `user_data` valid until the callback.
    fn zl_party_join_async(party: *const ZlParty) |completion| {
        let start = |party: Party| Ok(async move { party.join().await });
        call_later(party, "join", start, |()| Reply::empty(), completion)
    }
}

async_entry! {
    /// Leaves: one byte, 1 if this member's node was there.
    ///
    /// # Safety
    /// As for `zl_party_join_async`.
    fn zl_party_leave_async(party: *const ZlParty) |completion| {
        let start = |party: Party| Ok(async move { party.leave().await });
        call_later(party, "leave", start, Reply::yes_no, completion)
    }
}

async_entry! {
    /// The members' identifiers, as a list encoded as `zl_session_children` encodes it.
    ///
    /// # Safety
    /// As for `zl_party_join_async`.
    fn zl_party_members_async(party: *const ZlParty) |completion| {
        let start = |party: Party| Ok(async move { party.members().await });
        let members = |members: Vec<String>| Reply::data(args::encode_list(&members));
        call_later(party, "list", start, members, completion)
    }
}

/// `*out_participating` 1 while this member has joined and not left.
///
/// # Safety
/// `party` must be a live handle; `out_participating` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_party_participating(party: *const ZlParty, out_participating: *mut u8) -> i32 {
    guard(|| {
        let participating = castable::borrow(party)?.party.participating();
        args::put(out_participating, participating as u8, "out_participating")
    })
}

/// Frees the member. One that joined and did not leave keeps its node until
/// its session ends (it no longer joins again on a new session). Null is ignored.
///
/// # Safety
/// `party` must come from `zl_party_new`, freed once, with no call on it in flight.
#[no_mangle]
pub unsafe extern "C" fn zl_party_free(party: *mut ZlParty) {
    guard_void(|| castable::free(party))
}
