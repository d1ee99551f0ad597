//! An ephemeral node kept by a recipe (a party's member, a persistent
//! node): made on the live session, a lost create's reply found, and a
//! node of the same path that another session owns waited out.

use zookeeper_client as zk;

use super::{ask, make_dirs, OnSession};
use crate::error::{Error, Result};
use crate::session::{Live, Session};

/// Creates the ephemeral node `name` under `parent` (and `parent`) holding
/// `data` on the live session; the generation it is on. A node of this name
/// that another session made goes with that session: the create waits for
/// it to go (not within the request bound). A persistent node there is
/// taken as it is if `adopt` (kazoo's party reuses it), else
/// [`Error::NodeExists`]. A party's member and a persistent node are kept this way.
pub(crate) async fn create_kept(session: &Session, parent: &str, name: &str, data: &[u8], adopt: bool) -> Result<u64> {
    let live = session.live().await?;
    let node = format!("{parent}/{name}");
    loop {
        match session.bounded(create_on(session, &live, parent, &node, data, adopt)).await? {
            OnSession::Done(None) => return Ok(live.generation),
            OnSession::Done(Some(theirs)) => {
                let event = theirs.changed().await;
                if event.event_type == zk::EventType::Session && event.session_state.is_terminated() {
                    return Err(Error::SessionExpired { action: "create", path: node });
                }
            }
            OnSession::Ended => return Err(Error::SessionExpired { action: "create", path: node }),
        }
    }
}

/// Made, or found made by this session (a create whose reply was lost)
/// or by hand (a persistent node, if `adopt`); or else a watch on the node
/// another session owns.
async fn create_on(
    session: &Session,
    live: &Live,
    parent: &str,
    node: &str,
    data: &[u8],
    adopt: bool,
) -> Result<OnSession<Option<zk::OneshotWatcher>>> {
    let acls = zk::Acls::new(&session.options().acls);
    let ephemeral = zk::CreateMode::Ephemeral.with_acls(acls);
    loop {
        match ask!(live, live.client.create(node, data, &ephemeral)) {
            Ok(_) => return Ok(OnSession::Done(None)),
            Err(zk::Error::NodeExists) => match ask!(live, live.client.check_and_watch_stat(node)) {
                Ok((Some(stat), watcher)) if stat.ephemeral_owner != 0 && stat.ephemeral_owner != live.session_id => {
                    return Ok(OnSession::Done(Some(watcher)))
                }
                Ok((Some(stat), _)) if stat.ephemeral_owner == 0 && !adopt => {
                    return Err(Error::NodeExists { action: "keep", path: node.to_owned() })
                }
                Ok((Some(_), _)) => return Ok(OnSession::Done(None)),
                Ok((None, _)) => {}
                Err(err) => return Err(Error::zk(node, "check", err)),
            },
            Err(zk::Error::NoNode) => {
                let persistent = zk::CreateMode::Persistent.with_acls(acls);
                ask!(live, make_dirs(session, live, parent, &persistent))
                    .map_err(|err| Error::zk(parent, "create", err))?;
            }
            Err(err) => return Err(Error::zk(node, "create", err)),
        }
    }
}
