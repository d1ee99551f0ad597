//! Seeded fault schedules: schedule `i` of a run with seed `s` is the same
//! on every machine, so a failure replays with `--seed s --first i`.

use std::fmt;

/// splitmix64: small, seedable, good enough to pick faults.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// Who a fault hits, as the schedule names it; the bed maps it to a server
/// or a process when it applies the fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {
    Leader,
    /// The `n`-th follower (modulo their number).
    Follower(usize),
}

/// One fault, held for the schedule's length, then undone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// A follower cut from the leader only, both ways.
    FollowerFromLeader(Server),
    /// A server cut from every other server, both ways.
    Isolated(Server),
    /// The servers split in two; `leader_in_minority` says where the leader is.
    Split { leader_in_minority: bool },
    /// Five servers: {0,1} and {3,4} cut apart, all of them still reaching
    /// server 2 (the bridge). Three servers: one follower cut from the other.
    Bridge,
    /// Packets from the leader to a follower dropped, not the other way (or the reverse).
    OneWay { to_follower: bool, follower: usize },
    /// A contender's host cut from every server.
    ClientCut(usize),
    /// A server stopped (SIGSTOP), then continued.
    ServerPaused(Server),
    /// A server killed (SIGKILL), then started again.
    ServerKilled(Server),
    /// Every server restarted in turn, the leader last.
    RollingRestart,
    /// A contender stopped (SIGSTOP; a CLI contender's zoolock), then continued.
    ClientPaused(usize),
    /// A contender killed (SIGKILL; a CLI contender's zoolock), then started again.
    ClientKilled(usize),
    /// A CLI contender's supervisor killed (SIGKILL).
    SupervisorKilled(usize),
}

/// The kinds, in the order the first schedules go through them.
pub const KINDS: usize = 12;

impl Fault {
    pub fn kind(&self) -> &'static str {
        match self {
            Fault::FollowerFromLeader(_) => "follower-from-leader",
            Fault::Isolated(Server::Leader) => "leader-isolated",
            Fault::Isolated(_) => "follower-isolated",
            Fault::Split { .. } => "minority-majority",
            Fault::Bridge => "bridge",
            Fault::OneWay { .. } => "one-way",
            Fault::ClientCut(_) => "client-cut",
            Fault::ServerPaused(_) => "server-paused",
            Fault::ServerKilled(_) => "server-killed",
            Fault::RollingRestart => "rolling-restart",
            Fault::ClientPaused(_) => "client-paused",
            Fault::ClientKilled(_) => "client-killed",
            Fault::SupervisorKilled(_) => "supervisor-killed",
        }
    }
}

/// One schedule: a fault held for `hold_ms`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    pub index: u64,
    pub fault: Fault,
    pub hold_ms: u64,
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "schedule {}: {:?} for {} ms", self.index, self.fault, self.hold_ms)
    }
}

/// Schedule `index` of a run with `seed`, for `contenders` contenders (the
/// CLI ones listed in `cli`) and a session timeout of `timeout_ms`.
pub fn schedule(seed: u64, index: u64, contenders: usize, cli: &[usize], timeout_ms: u64) -> Schedule {
    let mut rng = Rng::new(seed ^ index.wrapping_mul(0xa076_1d64_78bd_642f));
    // The first schedules go through every kind in turn; then at random.
    let kind = if index < KINDS as u64 { index } else { rng.below(KINDS as u64) };
    let server = |rng: &mut Rng| if rng.chance(30) { Server::Leader } else { Server::Follower(rng.below(4) as usize) };
    let follower = |rng: &mut Rng| Server::Follower(rng.below(4) as usize);
    let client = |rng: &mut Rng| rng.below(contenders as u64) as usize;
    let fault = match kind {
        0 => Fault::FollowerFromLeader(follower(&mut rng)),
        1 => Fault::Isolated(server(&mut rng)),
        2 => Fault::Split { leader_in_minority: rng.chance(50) },
        3 => Fault::Bridge,
        4 => Fault::OneWay { to_follower: rng.chance(50), follower: rng.below(4) as usize },
        5 => Fault::ClientCut(client(&mut rng)),
        6 => Fault::ServerPaused(server(&mut rng)),
        7 => Fault::ServerKilled(server(&mut rng)),
        8 => Fault::RollingRestart,
        9 => Fault::ClientPaused(client(&mut rng)),
        10 => Fault::ClientKilled(client(&mut rng)),
        _ if !cli.is_empty() && rng.chance(50) => Fault::SupervisorKilled(cli[rng.below(cli.len() as u64) as usize]),
        _ => Fault::FollowerFromLeader(follower(&mut rng)),
    };
    // From a third of the session timeout (nothing should change) to 2.5 of
    // it (sessions expire, the cut-off side's clients are told).
    let hold_ms = timeout_ms / 3 + rng.below(timeout_ms * 13 / 6);
    Schedule { index, fault, hold_ms }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schedule_is_the_same_for_the_same_seed_and_index() {
        for index in 0..40 {
            assert_eq!(schedule(7, index, 4, &[3], 2000), schedule(7, index, 4, &[3], 2000));
        }
        assert_ne!(
            (0..40).map(|i| schedule(7, i, 4, &[3], 2000)).collect::<Vec<_>>(),
            (0..40).map(|i| schedule(8, i, 4, &[3], 2000)).collect::<Vec<_>>()
        );
    }

    #[test]
    fn the_first_schedules_go_through_every_kind() {
        let kinds: std::collections::BTreeSet<_> =
            (0..KINDS as u64).map(|i| schedule(1, i, 4, &[3], 2000).fault.kind()).collect();
        assert!(kinds.len() >= KINDS - 1, "{kinds:?}");
    }
}
