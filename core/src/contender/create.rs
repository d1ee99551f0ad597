//! A create of the contender's node whose reply did not come: the parent
//! was missing, or the connection broke under it and the node may exist.

use zookeeper_client as zk;

use super::Attempt;
use crate::error::{connection_lost, Error, Result};
use crate::naming::Tag;
use crate::session::Live;

/// What a failed create of the contender's node came to ([`Attempt::recover`]).
pub(crate) enum Recovered {
    /// The create had happened: the node, and the zxid that created it.
    Found {
        node: String,
        token: i64,
    },
    /// Create again: the parent was made, or the node was not found (with a new tag).
    Again,
    SessionEnded,
}

impl Attempt {
    /// After the create of this attempt's node on `live` failed with `err`:
    /// makes a missing parent, or looks for a node whose create's reply was
    /// lost, and says whether to create again. `new_tag` tags the next
    /// create when the node was not found.
    pub async fn recover(&mut self, live: &Live, err: zk::Error, new_tag: impl FnOnce() -> Tag) -> Result<Recovered> {
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
                // The create may have happened: look for our tag until the
                // server answers, and create again only if absent.
                let found = loop {
                    match find_own(live, &parent, self.tag(), ephemeral).await {
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
                        self.renew_tag(new_tag());
                        Ok(Recovered::Again)
                    }
                }
            }
            zk::Error::SessionExpired | zk::Error::ClientClosed => Ok(Recovered::SessionEnded),
            err => Err(Error::zk(&parent, "create a lock node under", err)),
        }
    }
}

/// Finds this session's node among `parent`'s children by its tag. An
/// ephemeral node of another session with the same tag is not ours.
/// No `parent` (an operator deleted it, or it was never made), no node.
pub(crate) async fn find_own(
    live: &Live,
    parent: &str,
    tag: &Tag,
    ephemeral: bool,
) -> Result<Option<(String, zk::Stat)>, zk::Error> {
    let children = match live.client.list_children(parent).await {
        Err(zk::Error::NoNode) => return Ok(None),
        listed => listed?,
    };
    let ours = |stat: &zk::Stat| !ephemeral || stat.ephemeral_owner == live.session_id;
    if tag.token().is_none() {
        let Some(name) = children.into_iter().find(|c| c.starts_with(tag.prefix())) else { return Ok(None) };
        let node = format!("{parent}/{name}");
        return Ok(live.client.check_stat(&node).await?.filter(ours).map(|stat| (node, stat)));
    }
    // A shared prefix: every node that has it is read, in one round trip.
    let names: Vec<String> = children.into_iter().filter(|c| tag.sequence(c).is_some()).collect();
    let found = read_tagged(live, parent, &names, tag, ephemeral).await?;
    Ok(found.map(|(name, stat)| (format!("{parent}/{name}"), stat)))
}

/// Reads `names` (children of `parent` with `tag`'s shared prefix) in one
/// round trip: the one whose data carries the tag's token and, ephemeral,
/// whose owner is this session.
pub(crate) async fn read_tagged<'a>(
    live: &Live,
    parent: &str,
    names: &'a [String],
    tag: &Tag,
    ephemeral: bool,
) -> Result<Option<(&'a String, zk::Stat)>, zk::Error> {
    if names.is_empty() {
        return Ok(None);
    }
    let mut reader = live.client.new_multi_reader();
    for name in names {
        reader.add_get_data(&format!("{parent}/{name}"))?;
    }
    let ours = |stat: &zk::Stat| !ephemeral || stat.ephemeral_owner == live.session_id;
    Ok(reader.commit().await?.into_iter().zip(names).find_map(|(read, name)| match read {
        zk::MultiReadResult::Data { data, stat } if ours(&stat) && tag.marks(&data) => Some((name, stat)),
        _ => None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::naming::{new_tag, Role};
    use crate::{Scheme, Session, SessionOptions};

    async fn two_sessions(name: &str) -> (std::sync::Arc<Live>, std::sync::Arc<Live>, String) {
        let connect = zk_harness::shared().connect_string();
        let ours = Session::connect(SessionOptions::new(&connect)).await.unwrap().live().await.unwrap();
        let theirs = Session::connect(SessionOptions::new(&connect)).await.unwrap().live().await.unwrap();
        let parent = format!("/zoolock-tests{}", zk_harness::unique_path(name));
        let open = zk::Acls::anyone_all();
        ours.client.mkdir(&parent, &zk::CreateMode::Persistent.with_acls(open)).await.unwrap();
        (ours, theirs, parent)
    }

    async fn create(live: &Live, parent: &str, tag: &Tag) -> String {
        let ephemeral = zk::CreateMode::EphemeralSequential.with_acls(zk::Acls::anyone_all());
        let (_, sequence) =
            live.client.create(&format!("{parent}/{}", tag.prefix()), &tag.data(b"id"), &ephemeral).await.unwrap();
        format!("{parent}/{}{sequence}", tag.prefix())
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_node_with_our_prefix_from_another_session_is_not_ours() {
        let (ours, theirs, parent) = two_sessions("find-own").await;
        let tag = new_tag(Scheme::Kazoo, Role::Writer);
        create(&theirs, &parent, &tag).await;

        assert_eq!(find_own(&ours, &parent, &tag, true).await.unwrap(), None);
        let (node, stat) = find_own(&theirs, &parent, &tag, true).await.unwrap().expect("their own node");
        assert!(node.starts_with(&format!("{parent}/{}", tag.prefix())));
        assert_eq!(stat.ephemeral_owner, theirs.session_id);
        // A persistent node has no owner: its unique prefix alone names it.
        assert!(find_own(&ours, &parent, &tag, false).await.unwrap().is_some());
    }

    /// DistributedLock's `lock-` is everyone's: the token in the data tells
    /// ours, and neither another session's node nor our own other one is.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_shared_prefix_node_is_found_by_its_token_and_owner() {
        let (ours, theirs, parent) = two_sessions("find-own-token").await;
        let tag = new_tag(Scheme::DistributedLock, Role::Writer);
        let other = new_tag(Scheme::DistributedLock, Role::Writer);
        create(&theirs, &parent, &tag).await;
        create(&ours, &parent, &other).await;
        let plain = zk::CreateMode::EphemeralSequential.with_acls(zk::Acls::anyone_all());
        ours.client.create(&format!("{parent}/lock-"), b"", &plain).await.unwrap();
        assert_eq!(find_own(&ours, &parent, &tag, true).await.unwrap(), None);

        let node = create(&ours, &parent, &tag).await;
        let (found, stat) = find_own(&ours, &parent, &tag, true).await.unwrap().expect("our node");
        assert_eq!((found, stat.ephemeral_owner), (node, ours.session_id));
    }
}
