//! The delay relay against a plain echo server: what it promises the bench
//! and the tests that use it (a delay each way, order, no throughput limit,
//! its own CPU time counted, no new connection once dropped).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use zk_harness::DelayRelay;

/// Echoes every connection until it closes.
fn echo_server() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().map_while(Result::ok) {
            std::thread::spawn(move || {
                let mut reader = stream.try_clone().unwrap();
                let mut writer = stream;
                let _ = std::io::copy(&mut reader, &mut writer);
            });
        }
    });
    address
}

fn connect(relay: &DelayRelay) -> TcpStream {
    let stream = TcpStream::connect(relay.connect_string()).unwrap();
    stream.set_nodelay(true).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream
}

#[test]
fn a_relay_delays_each_way_keeps_order_and_does_not_limit_throughput() {
    let delay = Duration::from_millis(50);
    let relay = DelayRelay::start(echo_server(), delay).unwrap();
    let mut stream = connect(&relay);
    let sent = Instant::now();
    stream.write_all(b"ping").unwrap();
    let mut reply = [0; 4];
    stream.read_exact(&mut reply).unwrap();
    let round_trip = sent.elapsed();
    assert_eq!(&reply, b"ping");
    assert!(round_trip >= 2 * delay, "a round trip of {round_trip:?} through a relay of {delay:?} each way");

    // Twenty writes 5 ms apart, each a chunk of its own, come back in order
    // a round trip after the last: a relay that held each chunk until the
    // one before was delivered would take a delay per chunk, 20 in all.
    let sent = Instant::now();
    let writer = {
        let mut stream = stream.try_clone().unwrap();
        std::thread::spawn(move || {
            for i in 0u32..20 {
                stream.write_all(&i.to_be_bytes()).unwrap();
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    for i in 0u32..20 {
        let mut number = [0; 4];
        stream.read_exact(&mut number).unwrap();
        assert_eq!(u32::from_be_bytes(number), i, "out of order");
    }
    writer.join().unwrap();
    let all = sent.elapsed();
    assert!(all < 8 * delay, "20 paced writes took {all:?}: the relay holds each chunk up");
}

/// The CPU time of the relay's own thread: it grows with what it relays,
/// and not with what another thread of the process does.
#[test]
fn a_relay_counts_its_own_cpu_time() {
    let relay = DelayRelay::start(echo_server(), Duration::ZERO).unwrap();
    let idle = relay.cpu_time();
    let spun = Instant::now();
    while spun.elapsed() < Duration::from_millis(300) {
        std::hint::black_box(spun.elapsed());
    }
    let while_spinning = relay.cpu_time() - idle;
    assert!(while_spinning < Duration::from_millis(50), "another thread's 300 ms counted as {while_spinning:?}");

    let before = relay.cpu_time();
    let mut stream = connect(&relay);
    const TOTAL: usize = 256 << 20;
    let reader = {
        let mut stream = stream.try_clone().unwrap();
        std::thread::spawn(move || {
            let mut buffer = vec![0; 64 * 1024];
            let mut read = 0;
            while read < TOTAL {
                let n = stream.read(&mut buffer).unwrap();
                assert!(n > 0, "the relay closed after {read} bytes");
                read += n;
            }
        })
    };
    let chunk = vec![7; 64 * 1024];
    for _ in 0..TOTAL / chunk.len() {
        stream.write_all(&chunk).unwrap();
    }
    reader.join().unwrap();
    let used = relay.cpu_time() - before;
    assert!(used > Duration::ZERO, "256 MiB relayed both ways in no CPU time");
}

/// One end's half-close reaches the other, and the other way still relays.
#[test]
fn a_relay_passes_a_half_close_on() {
    let relay = DelayRelay::start(echo_server(), Duration::from_millis(1)).unwrap();
    let mut stream = connect(&relay);
    stream.write_all(b"last words").unwrap();
    stream.shutdown(std::net::Shutdown::Write).unwrap();
    let mut echoed = Vec::new();
    stream.read_to_end(&mut echoed).unwrap();
    assert_eq!(echoed, b"last words", "the echo, then the server's own close");
}

#[test]
fn a_dropped_relay_serves_the_connections_made_and_takes_no_new_one() {
    let relay = DelayRelay::start(echo_server(), Duration::from_millis(1)).unwrap();
    let address = relay.connect_string();
    let mut made = connect(&relay);
    drop(relay);
    made.write_all(b"still").unwrap();
    let mut reply = [0; 5];
    made.read_exact(&mut reply).unwrap();
    assert_eq!(&reply, b"still");

    // Whether the kernel still completes the handshake or refuses it, nothing is relayed.
    if let Ok(mut late) = TcpStream::connect(&address) {
        late.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let _ = late.write_all(b"late");
        let mut byte = [0; 1];
        assert!(!matches!(late.read(&mut byte), Ok(1..)), "a dropped relay relayed a new connection");
    }
}
