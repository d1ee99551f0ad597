//! The history of a run and its checks. Every contender says, on one clock
//! (`CLOCK_MONOTONIC`, shared by every process of the machine), when it
//! began to believe it held a lock path and the last time a read of its
//! state said so; the fencing resource logs every write. The checker fails
//! on two contenders' believed holds of one path that overlap, on a write
//! the resource accepted out of token order, on orphan nodes and on hangs.
//!
//! A believed hold runs from the acquire's return (when the first read
//! says held) to the last read that said held: a contender reads its state
//! before each write, every few milliseconds. When a contender is killed
//! in a hold, its hold ends at the kill. A CLI contender's CMD cannot say
//! when it dies: it says `held` at each write, and its hold ends at the
//! last one (it writes every 5 ms; the bound keeps a tenth of the session
//! timeout back, 160 ms here).

use std::collections::BTreeMap;
use std::fmt;

/// Nanoseconds on `CLOCK_MONOTONIC`.
pub type Ns = u64;

pub fn mono_now() -> Ns {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// How a believed hold ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// The contender released it.
    Released,
    /// A read said something else (`SUSPENDED`, `LOST`, …) at `at`.
    Read { state: String, at: Ns },
    /// The contender was killed in it.
    Killed,
    /// Its CMD's last word (CLI) or the run's end.
    Silent,
}

/// One believed hold.
#[derive(Debug, Clone)]
pub struct Hold {
    pub contender: String,
    pub path: String,
    pub token: i64,
    pub start: Ns,
    /// The last read that said held (or the kill).
    pub end: Ns,
    pub ending: Ending,
}

/// One write the resource answered.
#[derive(Debug, Clone)]
pub struct Write {
    pub contender: String,
    pub path: String,
    pub token: i64,
    pub accepted: bool,
}

/// What a contender's line says, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Said {
    Ready,
    /// `begin PATH TOKEN T`: the acquire returned at T and a read said held.
    Begin {
        path: String,
        token: i64,
        at: Ns,
    },
    /// `held PATH TOKEN T`: a read (a CLI CMD: a write) at T.
    Held {
        path: String,
        token: i64,
        at: Ns,
    },
    /// `end PATH TOKEN LAST T HOW`: last read held at LAST; at T it was HOW.
    End {
        path: String,
        token: i64,
        last: Ns,
        at: Ns,
        how: String,
    },
    /// `timeout PATH T` / `error TEXT`: an acquire that did not hold.
    Timeout,
    Error(String),
}

impl Said {
    pub fn parse(line: &str) -> Option<Said> {
        let words: Vec<&str> = line.split_whitespace().collect();
        let num = |i: usize| words.get(i)?.parse::<u64>().ok();
        let token = |i: usize| words.get(i)?.parse::<i64>().ok();
        Some(match *words.first()? {
            "ready" => Said::Ready,
            "begin" => Said::Begin { path: words.get(1)?.to_string(), token: token(2)?, at: num(3)? },
            "held" => Said::Held { path: words.get(1)?.to_string(), token: token(2)?, at: num(3)? },
            "end" => Said::End {
                path: words.get(1)?.to_string(),
                token: token(2)?,
                last: num(3)?,
                at: num(4)?,
                how: words.get(5)?.to_string(),
            },
            "timeout" => Said::Timeout,
            "error" => Said::Error(words[1..].join(" ")),
            _ => return None,
        })
    }
}

/// Everything a run saw.
#[derive(Default)]
pub struct History {
    pub holds: Vec<Hold>,
    /// Open holds by contender.
    open: BTreeMap<String, Hold>,
    pub writes: Vec<Write>,
    pub acquisitions: usize,
    pub timeouts: usize,
    pub errors: BTreeMap<String, usize>,
}

impl History {
    /// Takes one line of `contender`'s.
    pub fn said(&mut self, contender: &str, said: Said) {
        match said {
            Said::Begin { path, token, at } => {
                self.close(contender, Ending::Silent, None);
                self.acquisitions += 1;
                let hold =
                    Hold { contender: contender.into(), path, token, start: at, end: at, ending: Ending::Silent };
                self.open.insert(contender.into(), hold);
            }
            Said::Held { path, token, at } => {
                if let Some(hold) = self.open.get_mut(contender).filter(|h| h.path == path && h.token == token) {
                    hold.end = hold.end.max(at);
                }
            }
            Said::End { path, token, last, at, how } => {
                if let Some(hold) = self.open.get_mut(contender).filter(|h| h.path == path && h.token == token) {
                    hold.end = hold.end.max(last);
                    let ending = if how == "released" { Ending::Released } else { Ending::Read { state: how, at } };
                    self.close(contender, ending, None);
                }
            }
            Said::Timeout => self.timeouts += 1,
            Said::Error(kind) => *self.errors.entry(kind).or_default() += 1,
            Said::Ready => {}
        }
    }

    /// `contender` was killed at `at`: an open hold ends there.
    pub fn killed(&mut self, contender: &str, at: Ns) {
        self.close(contender, Ending::Killed, Some(at));
    }

    /// `contender`'s CMD process ended (a CLI run's end): its hold ends at its last word.
    pub fn silent(&mut self, contender: &str) {
        self.close(contender, Ending::Silent, None);
    }

    fn close(&mut self, contender: &str, ending: Ending, at: Option<Ns>) {
        if let Some(mut hold) = self.open.remove(contender) {
            if let Some(at) = at {
                hold.end = hold.end.max(at);
            }
            hold.ending = ending;
            self.holds.push(hold);
        }
    }

    pub fn wrote(&mut self, write: Write) {
        self.writes.push(write);
    }

    /// Ends the run: open holds end at their last word.
    pub fn finish(&mut self) {
        let open: Vec<String> = self.open.keys().cloned().collect();
        for contender in open {
            self.silent(&contender);
        }
    }

    /// The checks; the violations found, each said for a person.
    pub fn check(&self) -> Vec<String> {
        let mut found = Vec::new();
        let mut by_path: BTreeMap<&str, Vec<&Hold>> = BTreeMap::new();
        for hold in &self.holds {
            by_path.entry(&hold.path).or_default().push(hold);
        }
        for holds in by_path.values_mut() {
            holds.sort_by_key(|h| h.start);
            // Each hold against the latest-ending one before it.
            let mut reach: Option<&Hold> = None;
            for &hold in holds.iter() {
                if let Some(before) = reach.filter(|b| hold.start <= b.end) {
                    found.push(format!("overlap: {before} and {hold}"));
                }
                if reach.is_none_or(|b| hold.end > b.end) {
                    reach = Some(hold);
                }
            }
        }
        let mut highest: BTreeMap<&str, i64> = BTreeMap::new();
        for write in self.writes.iter().filter(|w| w.accepted) {
            let top = highest.entry(&write.path).or_insert(i64::MIN);
            if write.token < *top {
                found.push(format!(
                    "accepted out of token order: {} wrote {} on {} after {}",
                    write.contender, write.token, write.path, top
                ));
            }
            *top = (*top).max(write.token);
        }
        found
    }

    /// How long before the next holder's start each hold that did not end
    /// by a release was over (ns; negative: an overlap), by how it ended:
    /// the closest call first.
    pub fn leads(&self) -> BTreeMap<&'static str, Vec<i64>> {
        let mut by_path: BTreeMap<&str, Vec<&Hold>> = BTreeMap::new();
        for hold in &self.holds {
            by_path.entry(&hold.path).or_default().push(hold);
        }
        let mut leads: BTreeMap<&'static str, Vec<i64>> = BTreeMap::new();
        for holds in by_path.values_mut() {
            holds.sort_by_key(|h| h.start);
            for pair in holds.windows(2) {
                let how = match pair[0].ending {
                    Ending::Released => continue,
                    Ending::Read { .. } => "told",
                    Ending::Killed => "killed",
                    Ending::Silent => "cli-stopped",
                };
                leads.entry(how).or_default().push(pair[1].start as i64 - pair[0].end as i64);
            }
        }
        for list in leads.values_mut() {
            list.sort_unstable();
        }
        leads
    }
}

impl fmt::Display for Hold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} held {} (token {}) from {:.3} to {:.3} s ({:?})",
            self.contender,
            self.path,
            self.token,
            self.start as f64 / 1e9,
            self.end as f64 / 1e9,
            self.ending
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn begin(history: &mut History, who: &str, token: i64, at: Ns) {
        history.said(who, Said::Begin { path: "/l".into(), token, at });
    }

    fn end(history: &mut History, who: &str, token: i64, last: Ns, how: &str) {
        let said = Said::End { path: "/l".into(), token, last, at: last + 1, how: how.into() };
        history.said(who, said);
    }

    #[test]
    fn holds_one_after_another_pass_and_an_overlap_fails() {
        let mut history = History::default();
        begin(&mut history, "a", 1, 100);
        end(&mut history, "a", 1, 200, "released");
        begin(&mut history, "b", 2, 201);
        end(&mut history, "b", 2, 300, "SUSPENDED");
        assert!(history.check().is_empty());
        begin(&mut history, "c", 3, 250);
        end(&mut history, "c", 3, 260, "released");
        let found = history.check();
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("overlap: b held"), "{found:?}");
    }

    #[test]
    fn a_killed_holder_holds_until_the_kill_and_a_cli_command_until_its_last_word() {
        let mut history = History::default();
        begin(&mut history, "a", 1, 100);
        history.killed("a", 500);
        begin(&mut history, "cli", 2, 400);
        history.said("cli", Said::Held { path: "/l".into(), token: 2, at: 450 });
        history.silent("cli");
        assert_eq!(history.holds[1].end, 450);
        assert_eq!(history.check().len(), 1);
        assert_eq!(history.leads()["killed"], vec![-100]);
    }

    #[test]
    fn a_write_accepted_below_the_highest_token_fails() {
        let mut history = History::default();
        let write = |token, accepted| Write { contender: "a".into(), path: "/l".into(), token, accepted };
        history.wrote(write(5, true));
        history.wrote(write(4, false));
        assert!(history.check().is_empty());
        history.wrote(write(4, true));
        assert_eq!(history.check().len(), 1);
    }

    #[test]
    fn lines_parse() {
        assert_eq!(Said::parse("begin /a 7 123"), Some(Said::Begin { path: "/a".into(), token: 7, at: 123 }));
        assert_eq!(
            Said::parse("end /a 7 120 130 SUSPENDED"),
            Some(Said::End { path: "/a".into(), token: 7, last: 120, at: 130, how: "SUSPENDED".into() })
        );
        assert_eq!(Said::parse("nonsense"), None);
    }
}
