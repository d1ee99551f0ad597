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
    let delay = Duration::from_millis(20);
    let relay = DelayRelay::start(echo_server(), delay).unwrap();
    let mut stream = connect(&relay);
    let sent = Instant::now();
    stream.write_all(b"ping").unwrap();
    let mut reply = [0; 4];
    stream.read_exact(&mut reply).unwrap();
    let round_trip = sent.elapsed();
    assert_eq!(&reply, b"ping");
    assert!(round_trip >= 2 * delay, "a round trip of {round_trip:?} through a relay of {delay:?} each way");

    // 500 writes in a row come back in order within a few round trips, not 500.
    let sent = Instant::now();
    let writer = {
        let mut stream = stream.try_clone().unwrap();
        std::thread::spawn(move || {
            for i in 0u32..500 {
                stream.write_all(&i.to_be_bytes()).unwrap();
            }
        })
    };
    for i in 0u32..500 {
        let mut number = [0; 4];
        stream.read_exact(&mut number).unwrap();
        assert_eq!(u32::from_be_bytes(number), i, "out of order");
    }
    writer.join().unwrap();
    let all = sent.elapsed();
    assert!(all < 50 * delay, "500 writes took {all:?}: the relay holds each chunk up");
}

#[test]
fn a_relay_counts_its_own_cpu_time() {
    let relay = DelayRelay::start(echo_server(), Duration::ZERO).unwrap();
    let before = relay.cpu_time();
    let mut stream = connect(&relay);
    let reader = {
        let mut stream = stream.try_clone().unwrap();
        std::thread::spawn(move || {
            let mut buffer = vec![0; 64 * 1024];
            let mut read = 0;
            while read < 256 << 20 {
                read += stream.read(&mut buffer).unwrap();
            }
        })
    };
    let chunk = vec![7; 64 * 1024];
    for _ in 0..(256 << 20) / chunk.len() {
        stream.write_all(&chunk).unwrap();
    }
    reader.join().unwrap();
    let used = relay.cpu_time() - before;
    assert!(used > Duration::ZERO, "256 MiB relayed both ways in no CPU time");
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
