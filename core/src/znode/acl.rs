//! A node's ACL and the session's credentials (kazoo's `get_acls`,
//! `set_acls`, `add_auth`).

use crate::error::{Error, Result};
use crate::options::validate_node_path;
use crate::runtime;
use crate::session::Session;
use crate::znode::{check_version, Stat};
use crate::{Acl, Permission};

impl Session {
    /// The node's ACL and stat; [`Error::NoNode`] if there is none.
    pub async fn get_acls(&self, path: &str) -> Result<(Vec<Acl>, Stat)> {
        validate_node_path(path)?;
        self.bounded(async {
            let (live, turn) = self.live_in_turn().await?;
            let reply = live.client.get_acl(path);
            drop(turn);
            let (acls, stat) = reply.await.map_err(|e| Error::zk(path, "read the ACL of", e))?;
            Ok((acls, Stat::from(&stat)))
        })
        .await
    }

    /// Replaces the node's ACL if its ACL is at `version` (the stat's
    /// `aversion`; `None` or -1: any), returning its new stat.
    /// [`Error::BadVersion`], [`Error::NoNode`], [`Error::InvalidAcl`] (also
    /// for an empty list, the server's answer to one), [`Error::NoAuth`].
    pub async fn set_acls(&self, path: &str, acls: &[Acl], version: Option<i32>) -> Result<Stat> {
        validate_node_path(path)?;
        let version = check_version(version)?;
        if acls.is_empty() {
            return Err(Error::InvalidAcl { action: "set the ACL of", path: path.to_owned() });
        }
        self.bounded(async {
            let (live, turn) = self.live_in_turn().await?;
            let reply = live.client.set_acl(path, acls, version);
            drop(turn);
            let stat = reply.await.map_err(|e| Error::zk(path, "set the ACL of", e))?;
            Ok(Stat::from(&stat))
        })
        .await
    }

    /// Adds credentials to the session (ZooKeeper's `addauth`, kazoo's
    /// `add_auth`): `("digest", b"user:password")`. Accepted ones are sent
    /// again on every later session this one opens after an expiry, as
    /// kazoo re-sends its `auth_data`. Refused ones end the ZooKeeper
    /// session on the server's side ([`Error::AuthFailed`]); zoolock then
    /// opens a new one without them.
    pub async fn add_auth(&self, scheme: &str, credential: &[u8]) -> Result<()> {
        if scheme.is_empty() {
            return Err(Error::InvalidArgument("an auth scheme is needed (e.g. \"digest\")".into()));
        }
        self.bounded(async {
            let (live, turn) = self.live_in_turn().await?;
            let reply = live.client.auth(scheme, credential);
            drop(turn);
            reply.await.map_err(|e| match e {
                zookeeper_client::Error::AuthFailed => Error::AuthFailed,
                e => Error::zk(scheme, "authenticate with", e),
            })?;
            self.remember_auth(scheme, credential);
            Ok(())
        })
        .await
    }

    /// [`Session::get_acls`] for callers without an async runtime.
    pub fn get_acls_blocking(&self, path: &str) -> Result<(Vec<Acl>, Stat)> {
        runtime::block_on(self.get_acls(path))
    }

    /// [`Session::set_acls`] for callers without an async runtime.
    pub fn set_acls_blocking(&self, path: &str, acls: &[Acl], version: Option<i32>) -> Result<Stat> {
        runtime::block_on(self.set_acls(path, acls, version))
    }

    /// [`Session::add_auth`] for callers without an async runtime.
    pub fn add_auth_blocking(&self, scheme: &str, credential: &[u8]) -> Result<()> {
        runtime::block_on(self.add_auth(scheme, credential))
    }
}

/// The permission bits every language gives (read 1, write 2, create 4,
/// delete 8, admin 16; kazoo's `Permissions`) as a [`Permission`];
/// [`Error::InvalidArgument`] for other bits.
pub fn permission_from_bits(bits: u32) -> Result<Permission> {
    if bits > 31 {
        return Err(Error::InvalidArgument(format!(
            "ACL permissions {bits} are not a combination of 1, 2, 4, 8 and 16 (read, write, create, delete, admin)"
        )));
    }
    Ok(PERMISSIONS
        .into_iter()
        .enumerate()
        .filter(|(i, _)| bits & (1 << i) != 0)
        .fold(Permission::NONE, |p, (_, q)| p | q))
}

/// The bits of a [`Permission`] ([`permission_from_bits`]' inverse).
pub fn permission_bits(permission: Permission) -> u32 {
    PERMISSIONS.into_iter().enumerate().filter(|(_, p)| permission.has(*p)).map(|(i, _)| 1 << i).sum()
}

/// Bit `i` of the permission bits is `PERMISSIONS[i]`.
const PERMISSIONS: [Permission; 5] =
    [Permission::READ, Permission::WRITE, Permission::CREATE, Permission::DELETE, Permission::ADMIN];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_bits_round_trip() {
        for bits in 0..=31 {
            assert_eq!(permission_bits(permission_from_bits(bits).unwrap()), bits);
        }
        assert_eq!(permission_from_bits(31).unwrap(), Permission::ALL);
        assert!(matches!(permission_from_bits(32), Err(Error::InvalidArgument(_))));
    }
}
