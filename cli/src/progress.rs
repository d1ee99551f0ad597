//! `--verbose`: what zoolock is doing, on stderr, each line `zoolock: …`.

use std::fmt::Display;
use std::time::SystemTime;

use zoolock::{Inspector, Participant, Session};

pub struct Progress {
    verbose: bool,
}

impl Progress {
    pub fn new(verbose: bool) -> Progress {
        Progress { verbose }
    }

    pub fn say(&self, what: impl Display) {
        if self.verbose {
            // Stamped as `watch` stamps its answers: RFC 3339, UTC, to the millisecond.
            let now = humantime::format_rfc3339_millis(std::time::SystemTime::now());
            eprintln!("{now} zoolock: {what}");
        }
    }

    /// While this session waits on `path`: who holds it and how many wait
    /// ahead, again at each change (on watches). Never completes.
    pub async fn queue(&self, session: &Session, path: &str) {
        if !self.verbose {
            return std::future::pending().await;
        }
        let Ok(mut inspector) = Inspector::new(session, path) else { return std::future::pending().await };
        let mut said = String::new();
        loop {
            // A failed look (a lost connection, a loaded server) is not the end of the wait: look again.
            let seen = match inspector.next().await {
                Ok(seen) => seen,
                Err(_) => {
                    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                    match Inspector::new(session, path) {
                        Ok(again) => inspector = again,
                        Err(_) => return std::future::pending().await,
                    }
                    continue;
                }
            };
            let me = session.status().session_id;
            let Some(mine) = seen.iter().position(|p| p.session_id == me && !p.holds) else { continue };
            let holders: Vec<String> = seen.iter().filter(|p| p.holds).map(holder).collect();
            let ahead = seen[..mine].iter().filter(|p| !p.holds).count();
            let news = format!("waiting for {path}: held by {}; {ahead} waiting ahead", holders.join(", "));
            if news != said {
                self.say(&news);
                said = news;
            }
        }
    }
}

fn holder(p: &Participant) -> String {
    let age = SystemTime::now().duration_since(p.created).unwrap_or_default();
    format!("{} (session {:#x}, for {})", crate::show::visible(&p.identifier), p.session_id, crate::duration::show(age))
}
