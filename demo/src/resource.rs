//! The guarded resource: an append-only ledger served on a loopback port, so
//! workers in any language can write to it. It enforces fencing itself: a
//! write whose token is lower than the highest it has accepted is refused —
//! the holder that sent it lost its lock without acting on it yet.
//!
//! Protocol, one line each way: `write <worker> <language> <token> <wait_us>
//! <start_ns>` → `ok` or `refused <highest>`. `start_ns` is when the worker's
//! critical section began (acquire returned), on this machine's clock; it
//! ends when the worker has the answer, so accepted critical sections can be
//! checked for overlap. The fault injector may hold one write's answer back
//! ([`Resource::hold_next_reply`]): its worker stays in its critical section.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub fn now_ns() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).expect("clock after 1970").as_nanos()
}

/// One accepted write: a critical section as the resource saw it.
#[derive(Debug, Clone)]
pub struct Record {
    pub worker: String,
    pub language: String,
    pub token: i64,
    pub start: u128,
    pub end: u128,
    pub wait: Duration,
}

#[derive(Default)]
pub struct Ledger {
    pub records: Vec<Record>,
    pub refused: usize,
    /// Writes in flight at once: more than one means two holders at once.
    inside: usize,
    pub overlaps: usize,
    highest: i64,
    hold: Hold,
}

/// The answer held back, if any (see [`Resource::hold_next_reply`]).
#[derive(Default, Clone, Copy)]
enum Hold {
    #[default]
    None,
    /// The next accepted write this takes waits for its answer.
    Armed(fn(&Record) -> bool),
    /// The answer to record `i` waits until the hold is dropped.
    Holding(usize),
}

/// A write whose answer waits until this is dropped.
pub struct HeldReply {
    pub record: Record,
    resource: Resource,
}

impl Drop for HeldReply {
    fn drop(&mut self) {
        self.resource.ledger.lock().unwrap().hold = Hold::None;
        self.resource.written.notify_all();
    }
}

#[derive(Clone)]
pub struct Resource {
    pub address: String,
    pub ledger: Arc<Mutex<Ledger>>,
    written: Arc<Condvar>,
}

impl Resource {
    pub fn start() -> std::io::Result<Resource> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let address = listener.local_addr()?.to_string();
        let ledger = Arc::new(Mutex::new(Ledger { highest: i64::MIN, ..Ledger::default() }));
        let written = Arc::new(Condvar::new());
        let (shared, signal) = (ledger.clone(), written.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (ledger, signal) = (shared.clone(), signal.clone());
                std::thread::spawn(move || serve(stream, &ledger, &signal));
            }
        });
        Ok(Resource { address, ledger, written })
    }

    pub fn count(&self) -> usize {
        self.ledger.lock().unwrap().records.len()
    }

    /// Waits until `n` writes were accepted; false after `limit`.
    pub fn wait_for_writes(&self, n: usize, limit: Duration) -> bool {
        let ledger = self.ledger.lock().unwrap();
        let (_ledger, waited) = self.written.wait_timeout_while(ledger, limit, |l| l.records.len() < n).unwrap();
        !waited.timed_out()
    }

    /// Waits for the next write accepted that `pick` takes, and holds its
    /// answer back until the returned [`HeldReply`] is dropped: its worker
    /// waits inside its critical section meanwhile, still holding the lock.
    /// None after `limit`.
    pub fn hold_next_reply(&self, limit: Duration, pick: fn(&Record) -> bool) -> Option<HeldReply> {
        let mut ledger = self.ledger.lock().unwrap();
        ledger.hold = Hold::Armed(pick);
        let end = Instant::now() + limit;
        loop {
            if let Hold::Holding(i) = ledger.hold {
                return Some(HeldReply { record: ledger.records[i].clone(), resource: self.clone() });
            }
            let Some(left) = end.checked_duration_since(Instant::now()) else {
                ledger.hold = Hold::None;
                return None;
            };
            ledger = self.written.wait_timeout(ledger, left).unwrap().0;
        }
    }
}

fn serve(stream: TcpStream, ledger: &Mutex<Ledger>, written: &Condvar) {
    let _ = stream.set_nodelay(true);
    let Ok(mut out) = stream.try_clone() else { return };
    for line in BufReader::new(stream).lines().map_while(Result::ok) {
        let reply = match line.split_whitespace().collect::<Vec<_>>().as_slice() {
            ["write", worker, language, token, wait_us, start] => match (token.parse(), wait_us.parse(), start.parse())
            {
                (Ok(token), Ok(wait_us), Ok(start)) => {
                    write(ledger, written, worker, language, token, Duration::from_micros(wait_us), start)
                }
                _ => "error bad numbers".to_owned(),
            },
            _ => "error expected: write <worker> <language> <token> <wait_us> <start_ns>".to_owned(),
        };
        if writeln!(out, "{reply}").is_err() {
            return;
        }
    }
}

/// Records the write and tells who waits for one; returns the answer,
/// once the hold on it (if any, see [`Resource::hold_next_reply`]) is dropped.
fn write(
    ledger: &Mutex<Ledger>,
    written: &Condvar,
    worker: &str,
    language: &str,
    token: i64,
    wait: Duration,
    start: u128,
) -> String {
    {
        let mut l = ledger.lock().unwrap();
        if token < l.highest {
            l.refused += 1;
            let refused = format!("refused {}", l.highest);
            drop(l);
            written.notify_all();
            return refused;
        }
        l.highest = token;
        l.inside += 1;
        if l.inside > 1 {
            l.overlaps += 1;
        }
    }
    // The write takes a little while, so that two holders at once would meet inside it.
    std::thread::sleep(Duration::from_micros(200));
    let end = now_ns();
    let mut l = ledger.lock().unwrap();
    l.inside -= 1;
    let record = Record { worker: worker.into(), language: language.into(), token, start, end, wait };
    let mut held = None;
    if let Hold::Armed(pick) = l.hold {
        if pick(&record) {
            held = Some(l.records.len());
            l.hold = Hold::Holding(l.records.len());
        }
    }
    l.records.push(record);
    written.notify_all();
    if let Some(i) = held {
        drop(written.wait_while(l, |l| matches!(l.hold, Hold::Holding(h) if h == i)).unwrap());
    }
    "ok".to_owned()
}
