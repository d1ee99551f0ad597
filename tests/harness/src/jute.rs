//! The few ZooKeeper wire records the harness reads and writes (jute encoding:
//! big-endian integers, buffers as an int length then bytes, -1 for null).
//! Every frame on the wire is a 4-byte big-endian length then the record.

/// Largest first frame taken for a handshake; a 4-letter word such as `mntr`
/// reads as a huge length, so the proxy then passes bytes through untouched.
pub(crate) const MAX_HANDSHAKE: usize = 4096;

/// CloseSession's op code in a request header.
pub(crate) const OP_CLOSE_SESSION: i32 = -11;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ConnectRequest {
    pub protocol_version: i32,
    pub last_zxid_seen: i64,
    pub timeout_ms: i32,
    pub session_id: i64,
    pub passwd: Vec<u8>,
    pub read_only: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ConnectResponse {
    pub protocol_version: i32,
    pub timeout_ms: i32,
    pub session_id: i64,
    pub passwd: Vec<u8>,
    pub read_only: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReplyHeader {
    pub xid: i32,
    pub zxid: i64,
    pub err: i32,
}

struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.buf.len() < n {
            return None;
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Some(head)
    }
    fn i32(&mut self) -> Option<i32> {
        Some(i32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }
    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_be_bytes(self.take(8)?.try_into().ok()?))
    }
    fn buffer(&mut self) -> Option<Vec<u8>> {
        let len = self.i32()?;
        if len < 0 {
            return Some(Vec::new());
        }
        Some(self.take(len as usize)?.to_vec())
    }
    /// The optional trailing `readOnly` flag.
    fn opt_bool(&mut self) -> Option<bool> {
        self.take(1).map(|b| b[0] != 0)
    }
}

impl ConnectRequest {
    pub fn parse(body: &[u8]) -> Option<ConnectRequest> {
        let mut r = Reader { buf: body };
        Some(ConnectRequest {
            protocol_version: r.i32()?,
            last_zxid_seen: r.i64()?,
            timeout_ms: r.i32()?,
            session_id: r.i64()?,
            passwd: r.buffer()?,
            read_only: r.opt_bool(),
        })
    }

    /// The whole frame, length prefix included.
    pub fn encode(&self) -> Vec<u8> {
        let mut body = Vec::with_capacity(64);
        body.extend(self.protocol_version.to_be_bytes());
        body.extend(self.last_zxid_seen.to_be_bytes());
        body.extend(self.timeout_ms.to_be_bytes());
        body.extend(self.session_id.to_be_bytes());
        body.extend((self.passwd.len() as i32).to_be_bytes());
        body.extend(&self.passwd);
        if let Some(ro) = self.read_only {
            body.push(ro as u8);
        }
        frame(&body)
    }
}

impl ConnectResponse {
    pub fn parse(body: &[u8]) -> Option<ConnectResponse> {
        let mut r = Reader { buf: body };
        Some(ConnectResponse {
            protocol_version: r.i32()?,
            timeout_ms: r.i32()?,
            session_id: r.i64()?,
            passwd: r.buffer()?,
            read_only: r.opt_bool(),
        })
    }

    /// The server refuses a session it no longer knows with a zero timeout
    /// and session id: the client then declares the session expired.
    pub fn is_valid(&self) -> bool {
        self.timeout_ms > 0 && self.session_id != 0
    }

    #[cfg(test)]
    pub fn encode(&self) -> Vec<u8> {
        let mut body = Vec::new();
        body.extend(self.protocol_version.to_be_bytes());
        body.extend(self.timeout_ms.to_be_bytes());
        body.extend(self.session_id.to_be_bytes());
        body.extend((self.passwd.len() as i32).to_be_bytes());
        body.extend(&self.passwd);
        if let Some(ro) = self.read_only {
            body.push(ro as u8);
        }
        frame(&body)
    }
}

impl ReplyHeader {
    pub fn parse(body: &[u8]) -> Option<ReplyHeader> {
        let mut r = Reader { buf: body };
        Some(ReplyHeader {
            xid: r.i32()?,
            zxid: r.i64()?,
            err: r.i32()?,
        })
    }
}

/// A request with only a header: `xid`, `op`.
pub(crate) fn header_only_request(xid: i32, op: i32) -> Vec<u8> {
    let mut body = Vec::with_capacity(8);
    body.extend(xid.to_be_bytes());
    body.extend(op.to_be_bytes());
    frame(&body)
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + 4);
    out.extend((body.len() as u32).to_be_bytes());
    out.extend(body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_request_round_trip() {
        let req = ConnectRequest {
            protocol_version: 0,
            last_zxid_seen: 42,
            timeout_ms: 2000,
            session_id: 0x0100_0000_1234_5678,
            passwd: vec![7; 16],
            read_only: Some(false),
        };
        let wire = req.encode();
        assert_eq!(
            u32::from_be_bytes(wire[..4].try_into().unwrap()) as usize,
            wire.len() - 4
        );
        assert_eq!(ConnectRequest::parse(&wire[4..]), Some(req));
    }

    #[test]
    fn connect_response_without_read_only_flag() {
        let rsp = ConnectResponse {
            protocol_version: 0,
            timeout_ms: 4000,
            session_id: 9,
            passwd: vec![1; 16],
            read_only: None,
        };
        let wire = rsp.encode();
        assert_eq!(ConnectResponse::parse(&wire[4..]), Some(rsp.clone()));
        assert!(rsp.is_valid());
        assert!(ConnectResponse::parse(&wire[4..10]).is_none());
    }

    #[test]
    fn close_session_frame() {
        assert_eq!(
            header_only_request(1, OP_CLOSE_SESSION),
            vec![0, 0, 0, 8, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xf5]
        );
    }
}
