//! The ensemble's membership (ZooKeeper's `reconfig`, kazoo's
//! `KazooClient.reconfig`). The servers must allow it
//! (`reconfigEnabled=true`) and the session be allowed to write
//! `/zookeeper/config` (a superuser, or `skipACL`).

use zookeeper_client as zk;

use crate::error::{Error, Result};
use crate::runtime;
use crate::session::Session;
use crate::znode::Stat;

impl Session {
    /// Changes the ensemble, as kazoo's `reconfig(joining, leaving,
    /// new_members, from_config)`: either incrementally (`joining`: server
    /// specs such as `"server.4=host:2888:3888;2181"`, `leaving`: server
    /// ids, each comma-separated) or to `new_members` entirely; only if the
    /// config is at `from_config` (its zxid; `None`: any). Returns the new
    /// config and the stat of `/zookeeper/config`. A server with reconfig
    /// disabled answers [`Error::ZooKeeper`] ("ZooKeeper reconfiguration disabled").
    pub async fn reconfig(
        &self,
        joining: Option<&str>,
        leaving: Option<&str>,
        new_members: Option<&str>,
        from_config: Option<i64>,
    ) -> Result<(Vec<u8>, Stat)> {
        let update = match new_members {
            Some(_) if joining.is_some() || leaving.is_some() => {
                return Err(Error::InvalidArgument(
                    "reconfig takes new_members, or joining and leaving, not both".into(),
                ))
            }
            Some(members) => zk::EnsembleUpdate::New { ensemble: Some(members).into_iter() },
            None if joining.is_none() && leaving.is_none() => {
                return Err(Error::InvalidArgument("reconfig needs joining, leaving or new_members".into()))
            }
            None => zk::EnsembleUpdate::Incremental { joinings: joining.into_iter(), leavings: leaving.into_iter() },
        };
        let from_config = from_config.filter(|zxid| *zxid != -1);
        self.bounded(async {
            let (live, turn) = self.live_in_turn().await?;
            let reply = live.client.update_ensemble(update, from_config);
            drop(turn);
            let (config, stat) = reply.await.map_err(|e| Error::zk("/zookeeper/config", "reconfigure", e))?;
            Ok((config, Stat::from(&stat)))
        })
        .await
    }

    /// [`Session::reconfig`] for callers without an async runtime.
    pub fn reconfig_blocking(
        &self,
        joining: Option<&str>,
        leaving: Option<&str>,
        new_members: Option<&str>,
        from_config: Option<i64>,
    ) -> Result<(Vec<u8>, Stat)> {
        runtime::block_on(self.reconfig(joining, leaving, new_members, from_config))
    }
}
