//! A relay that delays every byte by a fixed time in each direction: the
//! round trip of a real network between the contestants and the server, on
//! a kernel without netem. Each chunk read is written `delay` after it was
//! read, in order, so the added latency is `delay` each way and the relay
//! does not limit throughput. Plain threads, not tokio: its timer's 1 ms
//! granularity would make 0.5 ms into 1.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub struct Relay {
    address: SocketAddr,
}

impl Relay {
    /// Listens on a free loopback port; each connection is relayed to `upstream`.
    pub fn start(upstream: SocketAddr, delay: Duration) -> std::io::Result<Relay> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let address = listener.local_addr()?;
        std::thread::spawn(move || {
            for client in listener.incoming().map_while(Result::ok) {
                let Ok(server) = TcpStream::connect(upstream) else { continue };
                for (from, to) in [(&client, &server), (&server, &client)] {
                    let (Ok(from), Ok(to)) = (from.try_clone(), to.try_clone()) else { continue };
                    let _ = (from.set_nodelay(true), to.set_nodelay(true));
                    pump(from, to, delay);
                }
            }
        });
        Ok(Relay { address })
    }

    /// The connect string of the server through the relay.
    pub fn connect_string(&self) -> String {
        self.address.to_string()
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
