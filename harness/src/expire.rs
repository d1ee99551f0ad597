//! Ends a session on purpose, the way ZooKeeper's own tests do: connect a
//! second time with the same session id and password, then close the session.

use crate::error::{Error, Result};
use crate::jute::{self, ConnectRequest, ConnectResponse, ReplyHeader};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// What `close_session` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The server closed the session.
    Closed,
    /// The server no longer knew the session: it had expired already.
    AlreadyExpired,
}

const XID: i32 = 1;

/// Takes over `session` on the server at `addr` and closes it.
pub(crate) fn close_session(addr: SocketAddr, session: i64, passwd: &[u8], timeout_ms: i32) -> Result<Outcome> {
    let (mut s, attached) = attach(addr, session, passwd, timeout_ms)?;
    if !attached {
        return Ok(Outcome::AlreadyExpired);
    }
    s.write_all(&jute::header_only_request(XID, jute::OP_CLOSE_SESSION))?;
    loop {
        let frame = match read_frame(&mut s) {
            Ok(frame) => frame,
            // The server may drop the connection before its reply is out:
            // a session it no longer accepts is closed all the same.
            Err(_) if !attach(addr, session, passwd, timeout_ms)?.1 => return Ok(Outcome::Closed),
            Err(e) => return Err(e),
        };
        let header = ReplyHeader::parse(&frame).ok_or_else(|| Error::new("malformed reply header"))?;
        if header.xid != XID {
            continue; // a notification or ping reply
        }
        if header.err != 0 {
            return Err(Error::new(format!("closeSession of {session:#x} failed: error {}", header.err)));
        }
        return Ok(Outcome::Closed);
    }
}

/// Connects as `session`; the flag says whether the server took it (false:
/// the session has ended).
fn attach(addr: SocketAddr, session: i64, passwd: &[u8], timeout_ms: i32) -> Result<(TcpStream, bool)> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    s.set_write_timeout(Some(Duration::from_secs(10)))?;
    s.set_nodelay(true)?;
    let req = ConnectRequest {
        protocol_version: 0,
        last_zxid_seen: 0,
        timeout_ms,
        session_id: session,
        passwd: passwd.to_vec(),
        read_only: Some(false),
    };
    s.write_all(&req.encode())?;
    let rsp = read_frame(&mut s)?;
    let rsp = ConnectResponse::parse(&rsp).ok_or_else(|| Error::new("malformed ConnectResponse"))?;
    Ok((s, rsp.is_valid()))
}

fn read_frame(s: &mut TcpStream) -> Result<Vec<u8>> {
    let mut len = [0u8; 4];
    s.read_exact(&mut len).map_err(|e| Error::new(format!("reading a reply: {e}")))?;
    let len = u32::from_be_bytes(len) as usize;
    if len > 1 << 20 {
        return Err(Error::new(format!("implausible frame length {len}")));
    }
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).map_err(|e| Error::new(format!("reading a reply: {e}")))?;
    Ok(body)
}
