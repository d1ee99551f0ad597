//! A relay that delays every byte by a fixed time in each direction: the
//! round trip of a real network between clients and a server, on a kernel
//! without netem (the bench's `--delay`, and tests of what a long round
//! trip changes). Each chunk read is written `delay` after it was read, in
//! order, so the added latency is `delay` each way and the relay does not
//! limit throughput. Plain threads, not tokio: its timer's 1 ms granularity
//! would make 0.5 ms into 1.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// Relays each connection made to it to one server, `delay` late each way.
/// Dropped, it takes no new connection; those made go on until either end
/// closes.
pub struct DelayRelay {
    address: SocketAddr,
    stopped: Arc<AtomicBool>,
}

impl DelayRelay {
    /// Listens on a free loopback port; each connection is relayed to `upstream`.
    pub fn start(upstream: SocketAddr, delay: Duration) -> std::io::Result<DelayRelay> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let address = listener.local_addr()?;
        let stopped = Arc::new(AtomicBool::new(false));
        let stop = stopped.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().map_while(Result::ok) {
                if stop.load(Ordering::Acquire) {
                    break;
                }
                let Ok(server) = TcpStream::connect(upstream) else { continue };
                for (from, to) in [(&client, &server), (&server, &client)] {
                    let (Ok(from), Ok(to)) = (from.try_clone(), to.try_clone()) else { continue };
                    let _ = (from.set_nodelay(true), to.set_nodelay(true));
                    pump(from, to, delay);
                }
            }
        });
        Ok(DelayRelay { address, stopped })
    }

    /// The connect string of the server through the relay.
    pub fn connect_string(&self) -> String {
        self.address.to_string()
    }
}

impl Drop for DelayRelay {
    fn drop(&mut self) {
        self.stopped.store(true, Ordering::Release);
        // Wakes the accepting thread, which sees the flag and ends.
        let _ = TcpStream::connect(self.address);
    }
}

/// One direction: a reader that stamps each chunk, a writer that sends it when due.
fn pump(mut from: TcpStream, mut to: TcpStream, delay: Duration) {
    let (chunks, due) = mpsc::channel::<(Instant, Vec<u8>)>();
    std::thread::spawn(move || {
        let mut buffer = vec![0; 64 * 1024];
        while let Ok(n @ 1..) = from.read(&mut buffer) {
            if chunks.send((Instant::now() + delay, buffer[..n].to_vec())).is_err() {
                break;
            }
        }
        let _ = from.shutdown(Shutdown::Read);
    });
    std::thread::spawn(move || {
        for (at, bytes) in due {
            if let Some(wait) = at.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
            if to.write_all(&bytes).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    });
}
