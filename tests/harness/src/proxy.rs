//! A TCP proxy in front of each server. It reads the connect handshake of
//! every connection to learn its session id and password, and can hold
//! (partition) or reset a session's connections on request.
//!
//! A partition holds bytes rather than dropping them, as TCP over a broken
//! network would: nothing is forwarded either way, sockets stay open, and on
//! heal the held bytes flow again (if the peers have not given up by then).

use crate::error::Result;
use crate::jute::{ConnectRequest, ConnectResponse, MAX_HANDSHAKE};
use crate::registry::Registry;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;
use tokio::sync::Notify;
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
    /// Listens on a free loopback port and forwards to `upstream_port`.
    pub fn start(index: usize, upstream_port: u16, registry: Arc<Registry>) -> Result<Proxy> {
        let listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        let upstream = SocketAddr::from((Ipv4Addr::LOCALHOST, upstream_port));
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
                if let Some((id, reset)) = registry.add_conn(index) {
                    tokio::spawn(serve(registry.clone(), id, reset, client, upstream));
                }
            }
        });
        Ok(Proxy {
            port,
            accept: task.abort_handle(),
        })
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

async fn serve(
    reg: Arc<Registry>,
    id: u64,
    reset: Arc<Notify>,
    client: TcpStream,
    upstream: SocketAddr,
) {
    let _guard = ConnGuard(reg.clone(), id);
    let server = tokio::select! {
        s = TcpStream::connect(upstream) => s,
        _ = reset.notified() => Err(io::ErrorKind::ConnectionReset.into()),
    };
    let server = match server {
        Ok(s) => s,
        // Server down: refuse the client the way a closed port would, with a reset.
        Err(_) => return set_linger_zero(client.as_raw_fd()),
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let fds = [client.as_raw_fd(), server.as_raw_fd()];
    let (client_r, client_w) = client.into_split();
    let (server_r, server_w) = server.into_split();
    let pumps = async {
        tokio::try_join!(
            pump(&reg, id, client_r, server_w, Side::Client),
            pump(&reg, id, server_r, client_w, Side::Server),
        )
    };
    tokio::pin!(pumps);
    tokio::select! {
        _ = &mut pumps => {}
        // The sockets are still open (owned by `pumps`): make their close a reset.
        _ = reset.notified() => fds.into_iter().for_each(set_linger_zero),
    }
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

/// Forwards `from` to `to`, learning the session from the first frame and
/// holding bytes while the connection is partitioned.
async fn pump(
    reg: &Registry,
    id: u64,
    mut from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    side: Side,
) -> io::Result<()> {
    // Bytes read but not forwarded yet; at first, the first frame.
    let (mut held, mut eof) = first_frame(reg, id, &mut from, side).await?;
    let mut buf = vec![0u8; 32 * 1024];
    let mut delivered = false;
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
        if !held.is_empty() {
            to.write_all(&held).await?;
            held.clear();
            delivered = true;
        }
        if eof {
            let _ = to.shutdown().await;
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

/// Reads the first frame (a 4-letter word's first 4 bytes otherwise) and
/// learns the session from it; returns the bytes and whether EOF came first.
async fn first_frame(
    reg: &Registry,
    id: u64,
    from: &mut (impl AsyncRead + Unpin),
    side: Side,
) -> io::Result<(Vec<u8>, bool)> {
    let mut first = vec![0u8; 4];
    let mut eof = read_full(from, &mut first).await?;
    let len = if eof {
        0
    } else {
        u32::from_be_bytes([first[0], first[1], first[2], first[3]]) as usize
    };
    if (1..=MAX_HANDSHAKE).contains(&len) {
        let mut body = vec![0u8; len];
        eof = read_full(from, &mut body).await?;
        if !eof {
            learn_session(reg, id, &body, side);
        }
        first.extend(body);
    }
    Ok((first, eof))
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

fn set_linger_zero(fd: RawFd) {
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
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
