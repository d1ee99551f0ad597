//! The operator of the fault run: a plain ZooKeeper client, straight to the
//! servers (no proxy, so no fault hits it), that does what people do to a
//! "stuck" lock — `deleteall` of its path, or a delete of the holder's node.

use zookeeper_client as zk;

pub struct Operator {
    runtime: tokio::runtime::Runtime,
    client: zk::Client,
}

/// A lock node as the operator saw it.
pub struct Node {
    pub path: String,
    pub owner: i64,
    pub czxid: i64,
}

impl Operator {
    pub fn connect(hosts: &str) -> Result<Operator, String> {
        // A thread of its own: the client's pings must go on between calls, or its session expires.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        let client = runtime.block_on(zk::Client::connect(hosts)).map_err(|e| format!("operator: {e}"))?;
        Ok(Operator { runtime, client })
    }

    /// zkCli's `deleteall`: every child, then the path. Contenders keep
    /// queueing meanwhile (the path's delete then fails with NotEmpty). After
    /// one pass zkCli's way, each further try deletes the children it just
    /// listed and the path in one multi, so the race is one round trip long
    /// and not one per child: on a busy machine, child by child lost it every
    /// time. Says whether the path went, and how many children did (those of
    /// the first pass go even when the path stays).
    pub fn delete_all(&self, path: &str) -> Result<(bool, usize), String> {
        self.runtime.block_on(async {
            let mut deleted = 0;
            for attempt in 0..20 {
                let children = match self.client.list_children(path).await {
                    Ok(children) => children,
                    Err(zk::Error::NoNode) => return Ok((false, deleted)),
                    Err(e) => return Err(e.to_string()),
                };
                if attempt > 0 {
                    let mut writer = self.client.new_multi_writer();
                    for child in &children {
                        writer.add_delete(&format!("{path}/{child}"), None).map_err(|e| e.to_string())?;
                    }
                    writer.add_delete(path, None).map_err(|e| e.to_string())?;
                    match writer.commit().await {
                        Ok(_) => return Ok((true, deleted + children.len())),
                        // A child went (a release) or came (a contender) since the listing.
                        Err(zk::MultiWriteError::OperationFailed {
                            source: zk::Error::NoNode | zk::Error::NotEmpty,
                            ..
                        }) => continue,
                        Err(e) => return Err(e.to_string()),
                    }
                }
                for child in children {
                    match self.client.delete(&format!("{path}/{child}"), None).await {
                        Ok(()) => deleted += 1,
                        Err(zk::Error::NoNode) => {}
                        Err(e) => return Err(e.to_string()),
                    }
                }
                match self.client.delete(path, None).await {
                    Ok(()) => return Ok((true, deleted)),
                    Err(zk::Error::NotEmpty) => continue,
                    Err(zk::Error::NoNode) => return Ok((false, deleted)),
                    Err(e) => return Err(e.to_string()),
                }
            }
            Ok((false, deleted))
        })
    }

    /// The first node in the queue (lowest sequence number, kazoo's and
    /// Curator's names alike): the holder's, or none if the path is empty.
    pub fn first_node(&self, path: &str) -> Result<Option<Node>, String> {
        self.runtime.block_on(async {
            let children = match self.client.list_children(path).await {
                Ok(children) => children,
                Err(zk::Error::NoNode) => return Ok(None),
                Err(e) => return Err(e.to_string()),
            };
            let Some(first) = children.iter().filter_map(|c| sequence(c).map(|s| (s, c))).min().map(|(_, c)| c) else {
                return Ok(None);
            };
            let path = format!("{path}/{first}");
            match self.client.check_stat(&path).await {
                Ok(Some(stat)) => Ok(Some(Node { path, owner: stat.ephemeral_owner, czxid: stat.czxid })),
                Ok(None) => Ok(None),
                Err(e) => Err(e.to_string()),
            }
        })
    }

    /// Deletes one node; false if it was gone already.
    pub fn delete(&self, path: &str) -> Result<bool, String> {
        match self.runtime.block_on(self.client.delete(path, None)) {
            Ok(()) => Ok(true),
            Err(zk::Error::NoNode) => Ok(false),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// A lock node's sequence number: after kazoo's `__lock__` or Curator's `-lock-`.
fn sequence(name: &str) -> Option<i32> {
    let (_, seq) = name.rsplit_once("__lock__").or_else(|| name.rsplit_once("-lock-"))?;
    seq.parse().ok()
}
