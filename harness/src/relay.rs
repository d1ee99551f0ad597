//! A relay that delays every byte by a fixed time in each direction: the
//! round trip of a real network between clients and a server, on a kernel
//! without netem (the bench's `--delay`, and tests of what a long round
//! trip changes). Each chunk read is written `delay` after it was read, in
//! order, so the added latency is `delay` each way and the relay does not
//! limit throughput.
//!
//! A network's delay costs the hosts no CPU; this relay's does, on the
//! cores the contestants share. So it is one thread for every connection
//! (tokio's current-thread runtime: one `epoll_wait` serves every chunk
//! ready at once), each direction timed by its own `timerfd` (tokio's
//! timer rounds 0.5 ms up to 1), and it counts its thread's CPU time
//! ([`DelayRelay::cpu_time`]) so a measurement can say what it cost.

use std::collections::VecDeque;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

use tokio::io::unix::AsyncFd;
use tokio::io::Interest;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};

/// Relays each connection made to it to one server, `delay` late each way.
/// Dropped, it takes no new connection; those made go on until either end
/// closes.
pub struct DelayRelay {
    address: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    /// The relay thread's id, for its CPU time.
    thread: i32,
}

impl DelayRelay {
    /// Listens on a free loopback port; each connection is relayed to `upstream`.
    pub fn start(upstream: SocketAddr, delay: Duration) -> io::Result<DelayRelay> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let address = listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread().enable_io().build()?;
        let (stop, stopped) = oneshot::channel();
        let (started, running) = std::sync::mpsc::channel();
        std::thread::Builder::new().name("delay-relay".into()).spawn(move || {
            // SAFETY: gettid has no preconditions.
            let _ = started.send(unsafe { libc::gettid() });
            runtime.block_on(accept(listener, upstream, delay, stopped))
        })?;
        let thread = running.recv().map_err(|_| io::Error::other("the relay's thread did not start"))?;
        Ok(DelayRelay { address, stop: Some(stop), thread })
    }

    /// The connect string of the server through the relay.
    pub fn connect_string(&self) -> String {
        self.address.to_string()
    }

    /// CPU time (user and system) the relay's thread has used so far; zero once it ended.
    pub fn cpu_time(&self) -> Duration {
        let stat = format!("/proc/self/task/{}/stat", self.thread);
        Duration::from_secs_f64(crate::cpu_seconds(&stat).unwrap_or(0.0))
    }
}

impl Drop for DelayRelay {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Takes connections until stopped, then serves those made until they close.
async fn accept(listener: TcpListener, upstream: SocketAddr, delay: Duration, mut stopped: oneshot::Receiver<()>) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else { return };
    let mut pumps = tokio::task::JoinSet::new();
    loop {
        let accepted = tokio::select! {
            biased;
            _ = &mut stopped => break,
            accepted = listener.accept() => accepted,
        };
        // Connections that ended go; one that failed to come (out of fds, aborted) is no reason to stop.
        while pumps.try_join_next().is_some() {}
        let Ok((client, _)) = accepted else {
            // A pause, not a spin, while the others are served.
            if let Ok(mut pause) = Timer::new() {
                let _ = pause.until(Instant::now() + Duration::from_millis(10)).await;
            }
            continue;
        };
        relay(client, upstream, delay, &mut pumps).await;
    }
    // Connections whose handshake was done when the relay was dropped were made: served too.
    if let Ok(listener) = listener.into_std() {
        while let Ok((client, _)) = listener.accept() {
            if let Ok(client) = client.set_nonblocking(true).and_then(|()| TcpStream::from_std(client)) {
                relay(client, upstream, delay, &mut pumps).await;
            }
        }
    }
    while pumps.join_next().await.is_some() {}
}

/// Relays `client` to a new connection to `upstream`, a pump each way.
async fn relay(client: TcpStream, upstream: SocketAddr, delay: Duration, pumps: &mut tokio::task::JoinSet<()>) {
    let Ok(server) = TcpStream::connect(upstream).await else { return };
    let _ = (client.set_nodelay(true), server.set_nodelay(true));
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    pumps.spawn(pump(client_read, server_write, delay));
    pumps.spawn(pump(server_read, client_write, delay));
}

/// One direction: each chunk read is stamped, and written when due.
async fn pump(mut from: OwnedReadHalf, mut to: OwnedWriteHalf, delay: Duration) {
    let Ok(mut timer) = Timer::new() else { return };
    let (chunks, mut due) = mpsc::unbounded_channel::<(Instant, Vec<u8>)>();
    let read = async move {
        let mut buffer = vec![0; 64 * 1024];
        while let Ok(n @ 1..) = from.read(&mut buffer).await {
            if chunks.send((Instant::now() + delay, buffer[..n].to_vec())).is_err() {
                break;
            }
        }
    };
    let write = async move {
        // Chunks due together go in one write.
        let mut ready: VecDeque<(Instant, Vec<u8>)> = VecDeque::new();
        let mut batch = Vec::new();
        loop {
            if ready.is_empty() {
                match due.recv().await {
                    Some(chunk) => ready.push_back(chunk),
                    None => break,
                }
            }
            while let Ok(chunk) = due.try_recv() {
                ready.push_back(chunk);
            }
            let at = ready.front().expect("a chunk").0;
            if timer.until(at).await.is_err() {
                break;
            }
            let now = Instant::now();
            batch.clear();
            while ready.front().is_some_and(|(at, _)| *at <= now) {
                batch.extend_from_slice(&ready.pop_front().expect("a chunk").1);
            }
            if to.write_all(&batch).await.is_err() {
                break;
            }
        }
        let _ = to.shutdown().await;
    };
    tokio::join!(read, write);
}

/// A one-shot timer of the kernel's precision, awaited through the runtime's epoll.
struct Timer(AsyncFd<OwnedFd>);

impl Timer {
    fn new() -> io::Result<Timer> {
        // SAFETY: timerfd_create has no preconditions; a non-negative result is a new fd we own.
        let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just created and is owned by nothing else; the
        // AsyncFd owns it from here, so it outlives the registration.
        let timer = unsafe { AsyncFd::register_with_interest(OwnedFd::from_raw_fd(fd), Interest::READABLE) };
        Ok(Timer(timer.map_err(io::Error::from)?))
    }

    /// Returns at `at` (at once if it has passed).
    async fn until(&mut self, at: Instant) -> io::Result<()> {
        let Some(wait) = at.checked_duration_since(Instant::now()).filter(|wait| !wait.is_zero()) else {
            return Ok(());
        };
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec { tv_sec: wait.as_secs() as _, tv_nsec: wait.subsec_nanos() as _ },
        };
        // SAFETY: a valid timerfd and a valid itimerspec; the old value is not asked for.
        if unsafe { libc::timerfd_settime(self.0.as_raw_fd(), 0, &spec, std::ptr::null_mut()) } < 0 {
            return Err(io::Error::last_os_error());
        }
        loop {
            let mut guard = self.0.readable().await?;
            let mut expirations = [0u8; 8];
            // SAFETY: reads at most 8 bytes into an 8-byte buffer.
            let n = unsafe { libc::read(self.0.as_raw_fd(), expirations.as_mut_ptr().cast(), 8) };
            if n == 8 {
                // One-shot: nothing more to read until it is set again, which
                // spares the next wait a read that would find nothing.
                guard.clear_ready();
                return Ok(());
            }
            let err = io::Error::last_os_error();
            if err.kind() != io::ErrorKind::WouldBlock {
                return Err(err);
            }
            guard.clear_ready();
        }
    }
}
