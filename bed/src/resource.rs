//! The guarded resource: a fencing store every contender writes to while it
//! believes it holds. A write carries the path and the holder's fencing
//! token; the store refuses a token lower than the highest it accepted for
//! that path (the writer lost its hold without knowing). Served on TCP in
//! the bed's namespace, reached by every host through its router address.
//!
//! One line each way: `w CONTENDER PATH TOKEN` → `ok` or `no`.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use crate::history::Write;

#[derive(Clone, Default)]
pub struct Resource {
    inner: Arc<Mutex<Store>>,
}

#[derive(Default)]
struct Store {
    highest: BTreeMap<String, i64>,
    log: Vec<Write>,
}

impl Resource {
    /// Listens on every address of the bed's namespace; the port.
    pub fn start(&self) -> std::io::Result<u16> {
        let listener = TcpListener::bind("0.0.0.0:0")?;
        let port = listener.local_addr()?.port();
        let resource = self.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let resource = resource.clone();
                std::thread::spawn(move || resource.serve(stream));
            }
        });
        Ok(port)
    }

    fn serve(&self, stream: TcpStream) {
        let _ = stream.set_nodelay(true);
        let Ok(mut out) = stream.try_clone() else { return };
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { return };
            let words: Vec<&str> = line.split_whitespace().collect();
            let [_, contender, path, token] = words[..] else { return };
            let Ok(token) = token.parse::<i64>() else { return };
            let accepted = {
                let mut store = self.inner.lock().unwrap();
                let highest = store.highest.entry(path.to_owned()).or_insert(i64::MIN);
                let accepted = token >= *highest;
                *highest = (*highest).max(token);
                store.log.push(Write { contender: contender.into(), path: path.into(), token, accepted });
                accepted
            };
            if out.write_all(if accepted { b"ok\n" } else { b"no\n" }).is_err() {
                return;
            }
        }
    }

    /// The writes answered since the last call, in the order answered.
    pub fn take(&self) -> Vec<Write> {
        std::mem::take(&mut self.inner.lock().unwrap().log)
    }
}
