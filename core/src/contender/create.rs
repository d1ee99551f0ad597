//! A create of the contender's node whose reply did not come: the parent
//! was missing, or the connection broke under it and the node may exist.

use zookeeper_client as zk;

use super::Attempt;
use crate::error::{connection_lost, Error, Result};
use crate::session::Live;

/// What a failed create of the contender's node came to ([`Attempt::recover`]).
pub(crate) enum Recovered {
    /// The create had happened: the node, and the zxid that created it.
    Found {
        node: String,
        token: i64,
    },
    /// Create again: the parent was made, or the node was not found (under a new prefix).
    Again,
    SessionEnded,
}

impl Attempt {
    /// After the create of this attempt's node on `live` failed with `err`:
    /// makes a missing parent, or looks for a node whose create's reply was
    /// lost, and says whether to create again. `new_prefix` names the next
    /// create when the node was not found.
    pub async fn recover(
        &mut self,
        live: &Live,
        err: zk::Error,
        new_prefix: impl FnOnce() -> String,
    ) -> Result<Recovered> {
        let removal = self.removal.as_ref().expect("attempt in use");
        let (session, ephemeral) = (removal.session.clone(), removal.ephemeral);
        let parent = removal.target.parent().to_owned();
        match err {
            zk::Error::NoNode => {
                // The parent is made on first use only, not paid for on every acquire.
                let persistent = zk::CreateMode::Persistent.with_acls(zk::Acls::new(&session.options().acls));
                match crate::znode::make_dirs(&session, live, &parent, &persistent).await {
                    Ok(()) => Ok(Recovered::Again),
                    Err(err) if connection_lost(&err) => Ok(Recovered::Again),
                    Err(zk::Error::SessionExpired | zk::Error::ClientClosed) => Ok(Recovered::SessionEnded),
                    Err(err) => Err(Error::zk(&parent, "create", err)),
                }
            }
            err if connection_lost(&err) => {
                // The create may have happened: look for our unique prefix
                // until the server answers, and create again only if absent.
                let found = loop {
                    match find_own(live, &parent, self.prefix(), ephemeral).await {
                        Err(err) if connection_lost(&err) => continue,
                        Ok(found) => break found,
                        Err(zk::Error::SessionExpired | zk::Error::ClientClosed) => return Ok(Recovered::SessionEnded),
                        Err(err) => return Err(Error::zk(&parent, "list", err)),
                    }
                };
                match found {
                    Some((node, stat)) => Ok(Recovered::Found { node, token: stat.czxid }),
                    None => {
                        // It may still land: a request sent on the lost
                        // connection can reach the server after the
                        // listing sent on the new one.
                        self.renew_prefix(new_prefix());
                        Ok(Recovered::Again)
                    }
                }
            }
            zk::Error::SessionExpired | zk::Error::ClientClosed => Ok(Recovered::SessionEnded),
            err => Err(Error::zk(&parent, "create a lock node under", err)),
        }
    }
}

/// Finds this session's node among `parent`'s children by its unique prefix.
/// An ephemeral node of another session with the same prefix is not ours.
/// No `parent` (an operator deleted it, or it was never made), no node.
pub(crate) async fn find_own(
    live: &Live,
    parent: &str,
    prefix: &str,
    ephemeral: bool,
) -> Result<Option<(String, zk::Stat)>, zk::Error> {
    let children = match live.client.list_children(parent).await {
        Err(zk::Error::NoNode) => return Ok(None),
        listed => listed?,
    };
    let Some(name) = children.into_iter().find(|c| c.starts_with(prefix)) else { return Ok(None) };
    let node = format!("{parent}/{name}");
    match live.client.check_stat(&node).await? {
        Some(stat) if !ephemeral || stat.ephemeral_owner == live.session_id => Ok(Some((node, stat))),
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Session, SessionOptions};

    #[tokio::test(flavor = "multi_thread")]
    async fn a_node_with_our_prefix_from_another_session_is_not_ours() {
        let connect = zk_harness::shared().connect_string();
        let ours = Session::connect(SessionOptions::new(&connect)).await.unwrap().live().await.unwrap();
        let theirs = Session::connect(SessionOptions::new(&connect)).await.unwrap().live().await.unwrap();
        let parent = format!("/zoolock-tests{}", zk_harness::unique_path("find-own"));
        let open = zk::Acls::anyone_all();
        ours.client.mkdir(&parent, &zk::CreateMode::Persistent.with_acls(open)).await.unwrap();
        let prefix = crate::naming::new_prefix(crate::Scheme::Kazoo, crate::naming::Role::Writer);
        let ephemeral = zk::CreateMode::EphemeralSequential.with_acls(open);
        theirs.client.create(&format!("{parent}/{prefix}"), b"", &ephemeral).await.unwrap();

        assert_eq!(find_own(&ours, &parent, &prefix, true).await.unwrap(), None);
        let (node, stat) = find_own(&theirs, &parent, &prefix, true).await.unwrap().expect("their own node");
        assert!(node.starts_with(&format!("{parent}/{prefix}")));
        assert_eq!(stat.ephemeral_owner, theirs.session_id);
        // A persistent node has no owner: its unique prefix alone names it.
        assert!(find_own(&ours, &parent, &prefix, false).await.unwrap().is_some());
    }
}
