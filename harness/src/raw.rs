//! A few plain ZooKeeper requests for tests in languages without a client of
//! their own (C#): make a node with a chosen ACL, and list what is under a
//! path with each node's ephemeral owner (to find nodes a recipe left behind).
//! One short session per call, straight to a running server.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::jute::{self, ConnectRequest, ConnectResponse, ReplyHeader};
use crate::Ensemble;

const OP_CREATE: i32 = 1;
const OP_EXISTS: i32 = 3;
const OP_GET_CHILDREN: i32 = 8;
const NO_NODE: i32 = -101;
const NODE_EXISTS: i32 = -110;
const PERMS_ALL: i32 = 31;
const PERMS_READ: i32 = 1;

/// Who may do what on a node made by [`Ensemble::create_node`]: `world:anyone`
/// with every permission, or with read alone (so nobody can create children).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeAcl {
    All,
    ReadOnly,
}

/// A node under the path given to [`Ensemble::tree`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeNode {
    pub path: String,
    /// The session owning the node if it is ephemeral, else 0.
    pub ephemeral_owner: i64,
}

impl Ensemble {
    /// Creates the persistent node `path` with `acl`, and its missing parents
    /// open to all. An existing node is left as it is.
    pub fn create_node(&self, path: &str, acl: NodeAcl) -> Result<()> {
        let mut conn = Conn::open(self)?;
        let mut at = 0;
        while let Some(next) = path[at + 1..].find('/').map(|i| i + at + 1) {
            conn.create(&path[..next], PERMS_ALL)?;
            at = next;
        }
        let perms = if acl == NodeAcl::All { PERMS_ALL } else { PERMS_READ };
        conn.create(path, perms)?;
        conn.close();
        Ok(())
    }

    /// Every node below `path` (not `path` itself), depth first; empty if
    /// `path` does not exist.
    pub fn tree(&self, path: &str) -> Result<Vec<TreeNode>> {
        let mut conn = Conn::open(self)?;
        let mut found = Vec::new();
        let mut pending = vec![path.trim_end_matches('/').to_owned()];
        while let Some(parent) = pending.pop() {
            for child in conn.children(if parent.is_empty() { "/" } else { &parent })? {
                let full = format!("{parent}/{child}");
                // Gone between the listing and the stat: nothing to report.
                let Some(owner) = conn.ephemeral_owner(&full)? else {
                    continue;
                };
                found.push(TreeNode { path: full.clone(), ephemeral_owner: owner });
                pending.push(full);
            }
        }
        conn.close();
        Ok(found)
    }
}

struct Conn {
    stream: TcpStream,
    xid: i32,
}

impl Conn {
    fn open(ensemble: &Ensemble) -> Result<Conn> {
        let server =
            (0..ensemble.len()).find(|&i| ensemble.is_running(i)).ok_or_else(|| Error::new("no server is running"))?;
        let addr = ensemble.client_addr(server)?;
        let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        stream.set_write_timeout(Some(Duration::from_secs(10)))?;
        stream.set_nodelay(true)?;
        let request = ConnectRequest {
            protocol_version: 0,
            last_zxid_seen: 0,
            timeout_ms: 10_000,
            session_id: 0,
            passwd: vec![0; 16],
            read_only: Some(false),
        };
        stream.write_all(&request.encode())?;
        let reply = read_frame(&mut stream)?;
        match ConnectResponse::parse(&reply) {
            Some(response) if response.is_valid() => Ok(Conn { stream, xid: 0 }),
            _ => Err(Error::new("the server refused a new session")),
        }
    }

    /// Sends one request (`op` and its body) and returns the error code and reply body.
    fn call(&mut self, op: i32, body: &[u8]) -> Result<(i32, Vec<u8>)> {
        self.xid += 1;
        let mut frame = Vec::with_capacity(body.len() + 12);
        frame.extend(((body.len() + 8) as u32).to_be_bytes());
        frame.extend(self.xid.to_be_bytes());
        frame.extend(op.to_be_bytes());
        frame.extend(body);
        self.stream.write_all(&frame)?;
        loop {
            let reply = read_frame(&mut self.stream)?;
            let header = ReplyHeader::parse(&reply).ok_or_else(|| Error::new("malformed reply header"))?;
            if header.xid == self.xid {
                return Ok((header.err, reply[16..].to_vec()));
            }
        }
    }

    fn create(&mut self, path: &str, perms: i32) -> Result<()> {
        let mut body = Vec::new();
        put_string(&mut body, path);
        body.extend(0i32.to_be_bytes()); // empty data
        body.extend(1i32.to_be_bytes()); // one ACL: world:anyone
        body.extend(perms.to_be_bytes());
        put_string(&mut body, "world");
        put_string(&mut body, "anyone");
        body.extend(0i32.to_be_bytes()); // persistent
        match self.call(OP_CREATE, &body)?.0 {
            0 | NODE_EXISTS => Ok(()),
            err => Err(Error::new(format!("create {path}: ZooKeeper error {err}"))),
        }
    }

    fn children(&mut self, path: &str) -> Result<Vec<String>> {
        let mut body = Vec::new();
        put_string(&mut body, path);
        body.push(0); // no watch
        let (err, reply) = self.call(OP_GET_CHILDREN, &body)?;
        match err {
            NO_NODE => return Ok(Vec::new()),
            0 => {}
            err => return Err(Error::new(format!("list {path}: ZooKeeper error {err}"))),
        }
        let mut at = 0;
        let count = take_i32(&reply, &mut at)?;
        (0..count.max(0))
            .map(|_| {
                let len = take_i32(&reply, &mut at)? as usize;
                let name = reply.get(at..at + len).ok_or_else(|| Error::new("short children reply"))?;
                at += len;
                Ok(String::from_utf8_lossy(name).into_owned())
            })
            .collect()
    }

    /// The node's ephemeral owner, or `None` if it does not exist.
    fn ephemeral_owner(&mut self, path: &str) -> Result<Option<i64>> {
        let mut body = Vec::new();
        put_string(&mut body, path);
        body.push(0);
        let (err, stat) = self.call(OP_EXISTS, &body)?;
        match err {
            NO_NODE => Ok(None),
            // Stat: czxid, mzxid, ctime, mtime (8 bytes each), version,
            // cversion, aversion (4 each), then ephemeralOwner.
            0 => {
                let owner = stat.get(44..52).ok_or_else(|| Error::new("short stat"))?;
                Ok(Some(i64::from_be_bytes(owner.try_into().expect("8 bytes"))))
            }
            err => Err(Error::new(format!("stat {path}: ZooKeeper error {err}"))),
        }
    }

    fn close(mut self) {
        self.xid += 1;
        let _ = self.stream.write_all(&jute::header_only_request(self.xid, jute::OP_CLOSE_SESSION));
        let _ = read_frame(&mut self.stream);
    }
}

fn put_string(body: &mut Vec<u8>, text: &str) {
    body.extend((text.len() as i32).to_be_bytes());
    body.extend(text.as_bytes());
}

fn take_i32(buf: &[u8], at: &mut usize) -> Result<i32> {
    let bytes = buf.get(*at..*at + 4).ok_or_else(|| Error::new("short reply"))?;
    *at += 4;
    Ok(i32::from_be_bytes(bytes.try_into().expect("4 bytes")))
}

fn read_frame(stream: &mut TcpStream) -> Result<Vec<u8>> {
    let mut len = [0u8; 4];
    stream.read_exact(&mut len).map_err(|e| Error::new(format!("reading a reply: {e}")))?;
    let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
    stream.read_exact(&mut body).map_err(|e| Error::new(format!("reading a reply: {e}")))?;
    Ok(body)
}
