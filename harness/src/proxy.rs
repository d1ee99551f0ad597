//! A TCP proxy in front of each server. It reads the connect handshake of
//! every connection to learn its session id and password, and can hold
//! (partition) or reset a session's connections on request.
//!
//! A partition holds bytes rather than dropping them, as TCP over a broken
//! network would: nothing is forwarded either way, sockets stay open, and on
//! heal the held bytes flow again (if the peers have not given up by then).
//!
//! Request-level faults need whole frames: while one is armed, request
//! pumps hand each request frame to the registry, and a connection whose
//! reply a fault awaits hands each reply frame to it. Otherwise bytes pass
//! as they come, and the pumps only track where frames start.

use crate::error::Result;
use crate::jute::{ConnectRequest, ConnectResponse, MAX_HANDSHAKE};
use crate::registry::{ConnShared, Registry};
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;
use tokio::task::AbortHandle;

/// The harness's own runtime: proxies run here, whatever runtime (if any)
/// the test uses, and keep running while a test thread blocks.
pub(crate) fn runtime() -> &'static Runtime {
    static RT: OnceLock<Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("zkh-proxy")
            .enable_all()
            .build()
            .expect("cannot build the zk-harness runtime")
    })
}

pub(crate) struct Proxy {
    pub port: u16,
    accept: AbortHandle,
}

impl Proxy {
    /// Listens on a free loopback port and forwards to `upstream`.
    pub fn start(index: usize, upstream: SocketAddr, registry: Arc<Registry>) -> Result<Proxy> {
        let listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        let task = runtime().spawn(async move {
            let listener = match TcpListener::from_std(listener) {
                Ok(l) => l,
                Err(e) => return tracing::error!("proxy {index}: {e}"),
            };
            loop {
                let client = match listener.accept().await {
                    Ok((client, _)) => client,
                    Err(e) => {
                        // Out of file descriptors, most likely: back off a little.
                        tracing::warn!("proxy {index}: accept: {e}");
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    }
                };
                if let Some((id, conn)) = registry.add_conn(index) {
                    tokio::spawn(serve(registry.clone(), id, conn, client, upstream));
                }
            }
        });
        Ok(Proxy { port, accept: task.abort_handle() })
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// Removes the connection from the registry however `serve` ends.
struct ConnGuard(Arc<Registry>, u64);

impl Drop for ConnGuard {
    fn drop(&mut self) {
        self.0.remove_conn(self.1);
    }
}

async fn serve(reg: Arc<Registry>, id: u64, conn: Arc<ConnShared>, client: TcpStream, upstream: SocketAddr) {
    let _guard = ConnGuard(reg.clone(), id);
    let server = tokio::select! {
        s = TcpStream::connect(upstream) => s,
        _ = conn.reset.notified() => Err(io::ErrorKind::ConnectionReset.into()),
    };
    let server = match server {
        Ok(s) => s,
        // Server down: refuse the client the way a closed port would, with a reset.
        Err(_) => return set_linger_zero(client.as_raw_fd()),
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let client_fd = client.as_raw_fd();
    // The pumps borrow the halves, so that a fault resetting the client
    // leaves the server's side open. Dropping an owned write half shuts its
    // side down: a reset is a FIN, then an RST when the socket closes.
    // zookeeper-client fails the requests on the wire with ConnectionLoss on
    // the FIN; a bare RST would fail them with an I/O error (Error::Custom).
    let (mut client_r, mut client_w) = client.into_split();
    let (mut server_r, mut server_w) = server.into_split();
    let requests = pump(&reg, &conn, id, &mut client_r, &mut server_w, Side::Client);
    let replies = pump(&reg, &conn, id, &mut server_r, &mut client_w, Side::Server);
    tokio::pin!(requests, replies);
    let pumps = async {
        let (mut requests_done, mut replies_done) = (false, false);
        while !(requests_done && replies_done) {
            let (ended, side) = tokio::select! {
                ended = &mut requests, if !requests_done => (ended, Side::Client),
                ended = &mut replies, if !replies_done => (ended, Side::Server),
            };
            match ended {
                Ok(()) if matches!(side, Side::Client) => requests_done = true,
                Ok(()) => replies_done = true,
                Err(e) if !is_fault_reset(&e) => return End::Closed,
                Err(_) if matches!(side, Side::Client) && !replies_done && conn.watches_replies() => {
                    return End::ResetAwaitingReply
                }
                Err(_) => return End::Reset,
            }
        }
        End::Closed
    };
    let end = tokio::select! {
        end = pumps => end,
        _ = conn.reset.notified() => End::Reset,
    };
    match end {
        End::Closed => {}
        End::Reset => set_linger_zero(client_fd),
        End::ResetAwaitingReply => {
            // A fault forwarded a request and resets the client before its
            // reply. The server's side stays open (no FIN) until the reply
            // comes: ZooKeeper drops a request it has not read yet when its
            // connection closes, and the fault promises the request is applied.
            conn.reset_client();
            set_linger_zero(client_fd);
            shutdown_write(client_fd);
            let replied = async {
                tokio::select! {
                    _ = &mut replies => {}
                    _ = conn.reset.notified() => {}
                }
            };
            if tokio::time::timeout(REPLY_WAIT, replied).await.is_err() {
                tracing::warn!("proxy connection {id}: no reply within {REPLY_WAIT:?} to a request reset before it");
            }
        }
    }
}

/// How long the server's side of a connection whose client a fault reset
/// stays open for the reply to the request forwarded before the reset.
const REPLY_WAIT: Duration = Duration::from_secs(10);

/// How a proxied connection ended.
enum End {
    /// A side closed, or failed.
    Closed,
    /// A fault or the harness reset it: the client's side closes with a reset.
    Reset,
    /// A fault reset the client while a reply on this connection is awaited.
    ResetAwaitingReply,
}

/// A fault ends the connection with a reset.
#[derive(Debug)]
struct FaultReset;

impl std::fmt::Display for FaultReset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("reset by a fault")
    }
}

impl std::error::Error for FaultReset {}

fn is_fault_reset(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|e| e.is::<FaultReset>())
}

#[derive(Clone, Copy)]
enum Side {
    /// Bytes from the client: the first frame is a ConnectRequest.
    Client,
    /// Bytes from the server: the first frame is a ConnectResponse.
    Server,
}

/// Most bytes held per direction of a partitioned connection; past this the
/// proxy stops reading and TCP pushes back.
const MAX_HELD: usize = 4 << 20;

/// Larger frames pass without a look (ZooKeeper's own limit, jute.maxbuffer,
/// is 1 MiB by default).
const MAX_INSPECTED: usize = 4 << 20;

/// Forwards `from` to `to`, learning the session from the first frame,
/// holding bytes while the connection is partitioned, and applying faults.
async fn pump(
    reg: &Registry,
    conn: &ConnShared,
    id: u64,
    mut from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    side: Side,
) -> io::Result<()> {
    // Bytes read but not forwarded yet; at first, the first frame.
    let (mut held, mut eof, handshake) = first_frame(reg, id, &mut from, side).await?;
    // Frames follow a handshake; a 4-letter word's bytes pass untouched.
    let mut frames = handshake.then_some(Frames { rest: held.len() });
    let mut buf = vec![0u8; 32 * 1024];
    let mut out = Vec::new();
    let mut delivered = false;
    // Replies to a client a fault reset are read and dropped.
    let discard = || matches!(side, Side::Server) && conn.client_is_reset();
    loop {
        if !eof && reg.is_blocked(id) {
            eof = hold(reg, id, &mut from, &mut held, &mut buf).await?;
        }
        if eof && reg.is_blocked(id) {
            if !delivered && matches!(side, Side::Client) {
                // The client gave up on a connection whose handshake never got
                // through (a reconnect attempt into the partition). Replaying
                // it on heal would move the session back to this server.
                return Err(io::ErrorKind::ConnectionAborted.into());
            }
            reg.wait_unblocked(id).await;
        }
        let inspecting = match side {
            Side::Client => reg.inspects_requests(),
            Side::Server => conn.watches_replies(),
        };
        match frames.as_mut() {
            Some(frames) if inspecting => {
                out.clear();
                let (used, reset) = frames.inspect(&held, &mut out, |frame, out| match side {
                    Side::Client => reg.on_request(id, frame, out),
                    Side::Server => reg.on_reply(id, frame, out),
                });
                held.drain(..used);
                if reset {
                    send(&mut to, &out, discard()).await?;
                    return Err(io::Error::new(io::ErrorKind::ConnectionAborted, FaultReset));
                }
                if eof {
                    // An incomplete last frame goes as it is.
                    out.append(&mut held);
                }
                if !out.is_empty() {
                    send(&mut to, &out, discard()).await?;
                    delivered = true;
                }
            }
            // Bytes pass as they come, but for an incomplete frame length:
            // the next frame can then be read whole if a fault is armed.
            Some(frames) if !eof => {
                let n = frames.pass(&held);
                if n > 0 {
                    send(&mut to, &held[..n], discard()).await?;
                    held.drain(..n);
                    delivered = true;
                }
            }
            _ => {
                if !held.is_empty() {
                    send(&mut to, &held, discard()).await?;
                    held.clear();
                    delivered = true;
                }
            }
        }
        if eof {
            let _ = to.shutdown().await;
            return Ok(());
        }
        if discard() && !conn.watches_replies() {
            return Ok(());
        }
        let n = from.read(&mut buf).await?;
        if n == 0 {
            eof = true;
        } else {
            held.extend_from_slice(&buf[..n]);
        }
    }
}

/// Writes `bytes` to `to`, or drops them.
async fn send(to: &mut (impl AsyncWrite + Unpin), bytes: &[u8], drop: bool) -> io::Result<()> {
    if drop {
        return Ok(());
    }
    to.write_all(bytes).await
}

/// Where frames start in one direction after the handshake: each is a
/// 4-byte big-endian length, then that many bytes.
struct Frames {
    /// Bytes of the current frame still to pass before the next starts.
    rest: usize,
}

impl Frames {
    /// How many bytes of `held` may pass now: all but an incomplete length
    /// at the start of a frame, kept so the next frame can be read whole.
    fn pass(&mut self, held: &[u8]) -> usize {
        let mut pos = 0;
        loop {
            let n = self.rest.min(held.len() - pos);
            pos += n;
            self.rest -= n;
            if held.len() - pos < 4 {
                return pos;
            }
            self.rest = 4 + frame_len(&held[pos..]);
        }
    }

    /// Hands each whole frame of `held` to `inspect`, which appends what to
    /// forward instead to `out` and says whether to reset the connection
    /// after it. Returns how many bytes of `held` were used (an incomplete
    /// frame waits for more bytes) and whether to reset.
    fn inspect(
        &mut self,
        held: &[u8],
        out: &mut Vec<u8>,
        mut inspect: impl FnMut(&[u8], &mut Vec<u8>) -> bool,
    ) -> (usize, bool) {
        let mut pos = 0;
        loop {
            let n = self.rest.min(held.len() - pos);
            out.extend_from_slice(&held[pos..pos + n]);
            pos += n;
            self.rest -= n;
            if held.len() - pos < 4 {
                return (pos, false);
            }
            let len = 4 + frame_len(&held[pos..]);
            if len > MAX_INSPECTED {
                self.rest = len;
                continue;
            }
            if held.len() - pos < len {
                return (pos, false);
            }
            let reset = inspect(&held[pos..pos + len], out);
            pos += len;
            if reset {
                return (pos, true);
            }
        }
    }
}

fn frame_len(bytes: &[u8]) -> usize {
    u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize
}

/// Reads the first frame (a 4-letter word's first 4 bytes otherwise) and
/// learns the session from it; returns the bytes, whether EOF came first,
/// and whether it was a whole handshake.
async fn first_frame(
    reg: &Registry,
    id: u64,
    from: &mut (impl AsyncRead + Unpin),
    side: Side,
) -> io::Result<(Vec<u8>, bool, bool)> {
    let mut first = vec![0u8; 4];
    let mut eof = read_full(from, &mut first).await?;
    let len = if eof { 0 } else { u32::from_be_bytes([first[0], first[1], first[2], first[3]]) as usize };
    let mut handshake = false;
    if (1..=MAX_HANDSHAKE).contains(&len) {
        let mut body = vec![0u8; len];
        eof = read_full(from, &mut body).await?;
        if !eof {
            learn_session(reg, id, &body, side);
            handshake = true;
        }
        first.extend(body);
    }
    Ok((first, eof, handshake))
}

/// While connection `id` is partitioned, keeps reading `from` into `held`
/// (so a close by the peer is noticed). Returns whether EOF came, or false
/// once the partition ends.
async fn hold(
    reg: &Registry,
    id: u64,
    from: &mut (impl AsyncRead + Unpin),
    held: &mut Vec<u8>,
    buf: &mut [u8],
) -> io::Result<bool> {
    let mut changes = reg.subscribe();
    while reg.is_blocked(id) {
        tokio::select! {
            changed = changes.changed() => {
                if changed.is_err() {
                    break;
                }
            }
            n = from.read(buf), if held.len() < MAX_HELD => {
                match n? {
                    0 => return Ok(true),
                    n => held.extend_from_slice(&buf[..n]),
                }
            }
        }
    }
    Ok(false)
}

fn learn_session(reg: &Registry, id: u64, body: &[u8], side: Side) {
    match side {
        Side::Client => {
            if let Some(req) = ConnectRequest::parse(body).filter(|r| r.session_id != 0) {
                reg.set_session(id, req.session_id, &req.passwd);
            }
        }
        Side::Server => {
            if let Some(rsp) = ConnectResponse::parse(body).filter(ConnectResponse::is_valid) {
                reg.set_session(id, rsp.session_id, &rsp.passwd);
            }
        }
    }
}

/// Fills `buf` unless EOF comes first; returns whether EOF came first (the
/// unread rest of `buf` is then truncated away).
async fn read_full(from: &mut (impl AsyncRead + Unpin), buf: &mut Vec<u8>) -> io::Result<bool> {
    let mut filled = 0;
    while filled < buf.len() {
        let n = from.read(&mut buf[filled..]).await?;
        if n == 0 {
            buf.truncate(filled);
            return Ok(true);
        }
        filled += n;
    }
    Ok(false)
}

/// Sends a FIN on socket `fd` (owned by the caller), leaving it open.
fn shutdown_write(fd: RawFd) {
    // SAFETY: `fd` is an open socket owned by the caller.
    unsafe {
        libc::shutdown(fd, libc::SHUT_WR);
    }
}

fn set_linger_zero(fd: RawFd) {
    let linger = libc::linger { l_onoff: 1, l_linger: 0 };
    // SAFETY: `fd` is an open socket owned by the caller; setsockopt only reads `linger`.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            &linger as *const libc::linger as *const libc::c_void,
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut out = (body.len() as u32).to_be_bytes().to_vec();
        out.extend(body);
        out
    }

    #[test]
    fn frames_pass_all_but_an_incomplete_length() {
        let mut wire = frame(b"abc");
        wire.extend(frame(b"de"));
        let mut f = Frames { rest: 0 };
        assert_eq!(f.pass(&wire[..9]), 7, "2 bytes of the second length wait");
        assert_eq!(f.pass(&wire[7..]), 6);
        let mut f = Frames { rest: 0 };
        assert_eq!(f.pass(&wire[..5]), 5, "a frame's body passes in parts");
        assert_eq!(f.pass(&wire[5..]), 8);
        assert_eq!(f.rest, 0);
    }

    #[test]
    fn frames_inspect_whole_frames_only() {
        let mut wire = frame(b"abc");
        wire.extend(frame(b"de"));
        wire.extend(frame(b"fgh"));
        // Mid-frame when inspection starts: the rest of that frame passes.
        let mut f = Frames { rest: 2 };
        let mut seen = Vec::new();
        let mut out = Vec::new();
        let (used, reset) = f.inspect(&wire[5..15], &mut out, |frame, out| {
            seen.push(frame.to_vec());
            out.extend(b"X");
            false
        });
        assert_eq!((used, reset), (8, false), "the third frame is incomplete");
        assert_eq!(seen, vec![wire[7..13].to_vec()]);
        assert_eq!(out, [&wire[5..7], b"X"].concat());
        // A reset stops at the frame that asked for it.
        let mut f = Frames { rest: 0 };
        let (used, reset) = f.inspect(&wire, &mut Vec::new(), |_, _| true);
        assert_eq!((used, reset), (7, true));
    }
}
