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

/// The start of a request frame's body: the header, and the path its op
/// names (the first field of most bodies; a multi's first op's path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RequestHead {
    pub xid: i32,
    pub op: i32,
    pub path: Option<String>,
}

/// Ops whose body starts with a path (ZooKeeper's `OpCode` numbers).
const PATH_FIRST: [i32; 20] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 15, 17, 18, 19, 20, 21, 103, 104, 106];
/// multi and multiRead: a MultiHeader (type, done, err) precedes each op.
const MULTI: [i32; 2] = [14, 22];

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
    fn string(&mut self) -> Option<String> {
        Some(String::from_utf8_lossy(&self.buffer()?).into_owned())
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
        Some(ReplyHeader { xid: r.i32()?, zxid: r.i64()?, err: r.i32()? })
    }
}

impl RequestHead {
    /// Parses a request body (after the length prefix); `None` if too short
    /// for a header. A path that cannot be read is `None`.
    pub fn parse(body: &[u8]) -> Option<RequestHead> {
        let mut r = Reader { buf: body };
        let xid = r.i32()?;
        let op = r.i32()?;
        let path = if PATH_FIRST.contains(&op) {
            r.string()
        } else if MULTI.contains(&op) {
            r.take(9).and_then(|_| r.string())
        } else {
            None
        };
        Some(RequestHead { xid, op, path })
    }
}

/// Rewrites the xid of a whole request frame (length prefix included).
pub(crate) fn set_request_xid(frame: &mut [u8], xid: i32) {
    frame[4..8].copy_from_slice(&xid.to_be_bytes());
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
        assert_eq!(u32::from_be_bytes(wire[..4].try_into().unwrap()) as usize, wire.len() - 4);
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

    fn request(xid: i32, op: i32, fields: &[u8]) -> Vec<u8> {
        let mut body = Vec::new();
        body.extend(xid.to_be_bytes());
        body.extend(op.to_be_bytes());
        body.extend(fields);
        frame(&body)
    }

    fn string(s: &str) -> Vec<u8> {
        let mut out = (s.len() as i32).to_be_bytes().to_vec();
        out.extend(s.as_bytes());
        out
    }

    #[test]
    fn request_heads() {
        // create2: path, data, acls, flags.
        let mut create = string("/a/b");
        create.extend([0, 0, 0, 0]);
        let wire = request(5, 15, &create);
        let head = RequestHead::parse(&wire[4..]).unwrap();
        assert_eq!(head, RequestHead { xid: 5, op: 15, path: Some("/a/b".into()) });
        // multi: header {type create, done false, err -1}, then the op's path.
        let mut multi = vec![0, 0, 0, 1, 0, 0xff, 0xff, 0xff, 0xff];
        multi.extend(string("/m"));
        let head = RequestHead::parse(&request(6, 14, &multi)[4..]).unwrap();
        assert_eq!(head.path.as_deref(), Some("/m"));
        // ping: no body, no path; a truncated path reads as none.
        assert_eq!(RequestHead::parse(&request(-2, 11, &[])[4..]).unwrap().path, None);
        assert_eq!(RequestHead::parse(&request(7, 2, &[0, 0, 0, 9, b'/'])[4..]).unwrap().path, None);
        assert!(RequestHead::parse(&[0, 0, 0, 1]).is_none());
        let mut wire = request(8, 2, &string("/x"));
        set_request_xid(&mut wire, -9);
        assert_eq!(RequestHead::parse(&wire[4..]).unwrap().xid, -9);
    }

    #[test]
    fn close_session_frame() {
        assert_eq!(header_only_request(1, OP_CLOSE_SESSION), vec![0, 0, 0, 8, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xf5]);
    }
}
