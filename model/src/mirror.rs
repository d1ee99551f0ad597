//! The mirror design (`core/src/mirror/mod.rs`, issue 16): one persistent
//! recursive watch per session on the lock path keeps a mirror of its
//! children, shared by the session's handles; a waiter decides on the mirror
//! alone. Here: the session's side of it — reading the watch's events,
//! the resync (`addWatch` and a listing), blinding. The waiter's decisions
//! are in [`crate::client`].

use crate::client::{OwnWatch, Pc, Woken};
use crate::zk::{self, Body, Event, Name, Op, OpKind, Request, Role};
use crate::{Recipe, State};

fn sort(names: &mut [(Name, Role)]) {
    names.sort_by_key(|(n, _)| (n.seq, n.prefix));
}

fn same(names: &[(Name, Role)], truth: &[Name]) -> bool {
    let mut a: Vec<Name> = names.iter().map(|(n, _)| *n).collect();
    let mut b = truth.to_vec();
    a.sort();
    b.sort();
    a == b
}

impl Recipe {
    /// The server produces an event per child changed, for every session
    /// whose watch hears it, once the whole transaction is applied.
    pub(crate) fn notify(&self, st: &mut State, changes: &[(Name, Role, bool)]) {
        let truth = st.tree.names();
        for session in st.sessions.iter_mut() {
            if let crate::zk::PathWatch::Live(produced) = &mut session.path_watch {
                for (i, &(name, role, created)) in changes.iter().enumerate() {
                    let last = i + 1 == changes.len();
                    session.events.push_back(Event::Child { name, role, created, truth: truth.clone(), last });
                    *produced = produced.saturating_add(1);
                }
            }
        }
    }

    /// A hand-over's marker for `next`, for every session whose watch hears it.
    pub(crate) fn notify_marker(&self, st: &mut State, next: Name) {
        for session in st.sessions.iter_mut() {
            if let crate::zk::PathWatch::Live(produced) = &mut session.path_watch {
                session.events.push_back(Event::Marker(next));
                *produced = produced.saturating_add(1);
            }
        }
    }

    /// The client of session `s` reads the next event of the mirror's watch
    /// (as the client's task reads it, or a drain before a later reply).
    pub(crate) fn read_event(&self, st: &mut State, s: u8) {
        let Some(event) = st.sessions[s as usize].events.pop_front() else { return };
        for c in self.clients_of(s) {
            for msg in st.clients[c as usize].inbox.iter_mut() {
                msg.after = msg.after.saturating_sub(1);
            }
        }
        let mirror = &mut st.sessions[s as usize].mirror;
        match event {
            // The broken variant: no resync after a reconnect, the mirror trusted as it was.
            Event::Disconnected if !self.rules.mirror_resync => {}
            Event::Disconnected => {
                mirror.buffer.clear();
                self.unsync(st, s);
            }
            _ if mirror.broken || mirror.dismissed => {}
            Event::Child { .. } | Event::Marker(_) if mirror.synced => self.apply_event(st, s, event, true),
            // The new watch's own channel: replayed once its listing is in.
            Event::Child { .. } | Event::Marker(_) if mirror.resyncing => mirror.buffer.push(event),
            Event::Child { .. } | Event::Marker(_) => {}
        }
    }

    /// `State::apply`: one create or delete, and the waiters it wakes.
    fn apply_event(&self, st: &mut State, s: u8, event: Event, check: bool) {
        if let Event::Marker(next) = event {
            // `State::handed_over`.
            let mirror = &mut st.sessions[s as usize].mirror;
            if mirror.names.iter().any(|(n, _)| *n == next) {
                mirror.handed = Some(next);
            }
            return;
        }
        let Event::Child { name, role, created, truth, last } = event else { return };
        let mirror = &mut st.sessions[s as usize].mirror;
        mirror.names.retain(|(n, _)| *n != name);
        if created {
            mirror.names.push((name, role));
            sort(&mut mirror.names);
            mirror.fresh.push(name);
        } else {
            mirror.fresh.clear();
            mirror.fresh.extend(mirror.handed.take().filter(|n| mirror.names.iter().any(|(m, _)| m == n)));
        }
        if check && last && !same(&mirror.names, &truth) {
            st.mirror_wrong.get_or_insert(s);
        }
        mirror.truth = truth;
        if !created {
            self.wake(st, s, Some(name), Woken::Deleted);
        }
    }

    /// Wakes the session's waiters on `name`'s deletion (all of them: `None`).
    fn wake(&self, st: &mut State, s: u8, name: Option<Name>, woken: Woken) {
        for c in self.clients_of(s) {
            let client = &mut st.clients[c as usize];
            let awaited = match client.pc {
                Pc::MirrorWait { on: Some(pred) } => pred,
                Pc::Holding { watch: OwnWatch::Mirror } => client.node.expect("a holder's node"),
                _ => continue,
            };
            if name.is_none_or(|n| n == awaited) && client.woken.is_none() {
                client.woken = Some(woken);
            }
        }
    }

    /// Stale from here on: every waiter looks again.
    pub(crate) fn unsync(&self, st: &mut State, s: u8) {
        let mirror = &mut st.sessions[s as usize].mirror;
        mirror.synced = false;
        mirror.names.clear();
        mirror.fresh.clear();
        mirror.handed = None;
        self.wake(st, s, None, Woken::Stale);
    }

    /// Wakes the waiters for the next rebuild.
    fn wake_on_sync(&self, st: &mut State, s: u8) {
        for c in self.clients_of(s) {
            let client = &mut st.clients[c as usize];
            if client.pc == (Pc::MirrorWait { on: None }) && client.woken.is_none() {
                client.woken = Some(Woken::Stale);
            }
        }
    }

    /// `Mirror::start_resync` by client `c`: `addWatch` and the listing,
    /// back to back (or, broken, the other way round).
    pub(crate) fn start_resync(&self, st: &mut State, s: u8, c: u8) {
        let mirror = &mut st.sessions[s as usize].mirror;
        if mirror.synced || mirror.resyncing || mirror.broken {
            return;
        }
        mirror.resyncing = true;
        self.send_resync(st, s, c);
    }

    fn send_resync(&self, st: &mut State, s: u8, c: u8) {
        let session = &mut st.sessions[s as usize];
        session.mirror.got_watch = false;
        session.mirror.got_list = None;
        session.mirror.buffer.clear();
        let ops =
            if self.rules.mirror_watch_first { [Op::AddWatch, Op::MirrorList] } else { [Op::MirrorList, Op::AddWatch] };
        for op in ops {
            session.requests.push_back(Request { client: c, op });
        }
    }

    /// `Mirror::blind`: lists instead, for good.
    pub(crate) fn blind(&self, st: &mut State, s: u8) {
        let mirror = &mut st.sessions[s as usize].mirror;
        mirror.broken = true;
        mirror.resyncing = false;
        mirror.buffer.clear();
        self.unsync(st, s);
        self.wake_on_sync(st, s);
    }

    /// `Mirror::dismiss`: the watch dropped (zookeeper-client's
    /// `RemoveWatches`, in order before any later `addWatch`: the events of
    /// the old watch reach no watcher, here dropped at once), the mirror
    /// stale, and every waiter and hold on it woken.
    pub(crate) fn dismiss(&self, st: &mut State, s: u8) {
        let session = &mut st.sessions[s as usize];
        session.mirror.dismissed = true;
        if let zk::PathWatch::Live(_) = session.path_watch {
            session.path_watch = zk::PathWatch::None;
        }
        session.events.clear();
        for c in self.clients_of(s) {
            for msg in st.clients[c as usize].inbox.iter_mut() {
                msg.after = 0;
            }
        }
        if self.rules.adaptive_wakes {
            self.unsync(st, s);
            self.wake_on_sync(st, s);
        } else {
            // The broken variant: the watch and the mirror's names go, its waiters are not told.
            let mirror = &mut st.sessions[s as usize].mirror;
            mirror.synced = false;
            mirror.names.clear();
            mirror.fresh.clear();
            mirror.handed = None;
        }
    }

    /// The resync task's answers, whichever handle's inbox they reach
    /// (`Mirror::resync`). Returns false for any other message.
    pub(crate) fn resync_reply(&self, st: &mut State, s: u8, c: u8, body: &Body) -> bool {
        let mirror = &mut st.sessions[s as usize].mirror;
        let second = if self.rules.mirror_watch_first { OpKind::MirrorList } else { OpKind::AddWatch };
        match body {
            Body::Watching => mirror.got_watch = true,
            Body::MirrorChildren(children, produced) => mirror.got_list = Some((children.clone(), *produced)),
            // Both requests fail on a broken connection; the loop sends both again.
            Body::ConnLoss(OpKind::AddWatch | OpKind::MirrorList) => {
                if *body == Body::ConnLoss(second) && mirror.resyncing && !mirror.synced {
                    self.send_resync(st, s, c);
                }
                return true;
            }
            _ => return false,
        }
        if !mirror.resyncing || !mirror.got_watch {
            return true;
        }
        let Some((children, produced)) = mirror.got_list.take() else { return true };
        // `State::install`, then the new watch's events, replayed in order.
        mirror.names = children.clone();
        sort(&mut mirror.names);
        mirror.fresh.clear();
        mirror.handed = None;
        mirror.truth = children.iter().map(|(n, _)| *n).collect();
        mirror.synced = true;
        mirror.resyncing = false;
        let buffer = std::mem::take(&mut mirror.buffer);
        let later = buffer.len() > produced as usize;
        // Mid-transaction (some of its events not read yet), there is nothing to compare with.
        let (truth, check) = match buffer.last() {
            Some(Event::Child { truth, last, .. }) if later => (truth.clone(), *last),
            // A marker is never a transaction's last change.
            Some(Event::Marker(_)) if later => (mirror.truth.clone(), false),
            _ => (mirror.truth.clone(), true),
        };
        for event in buffer {
            self.apply_event(st, s, event, false);
        }
        let mirror = &mut st.sessions[s as usize].mirror;
        if check && !same(&mirror.names, &truth) {
            st.mirror_wrong.get_or_insert(s);
        }
        mirror.truth = truth;
        self.wake_on_sync(st, s);
        true
    }
}
