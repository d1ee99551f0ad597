//! Property tests of naming and ordering against a simple model: contenders
//! numbered by creation, whatever peer named them and however the signed
//! sequence wrapped.

use proptest::prelude::*;
use zoolock::naming::{parse, queue, standing, Role, Standing};

/// How a node is named: by which peer, as reader or writer.
#[derive(Debug, Clone, Copy)]
enum Style {
    KazooWriter,
    KazooReader,
    CuratorMutex,
    CuratorWriter,
    CuratorReader,
}

impl Style {
    fn role(self) -> Role {
        match self {
            Style::KazooReader | Style::CuratorReader => Role::Reader,
            _ => Role::Writer,
        }
    }

    fn name(self, id: usize, sequence: i32) -> String {
        // ZooKeeper appends printf("%010d") of the parent's counter.
        let seq = format!("{sequence:010}");
        let uuid = format!("{id:08x}-4f89-11d3-9a0c-0305e82c3301");
        match self {
            Style::KazooWriter => format!("{:0>32x}__lock__{seq}", id),
            Style::KazooReader => format!("{:0>32x}__rlock__{seq}", id),
            Style::CuratorMutex => format!("_c_{uuid}-lock-{seq}"),
            Style::CuratorWriter => format!("_c_{uuid}-__WRIT__{seq}"),
            Style::CuratorReader => format!("_c_{uuid}-__READ__{seq}"),
        }
    }
}

fn style() -> impl Strategy<Value = Style> {
    prop_oneof![
        Just(Style::KazooWriter),
        Just(Style::KazooReader),
        Just(Style::CuratorMutex),
        Just(Style::CuratorWriter),
        Just(Style::CuratorReader),
    ]
}

/// Live contenders: (creation number, style), created after `base`, spanning
/// less than 2^30 creations — bases near the wrap are favoured.
fn live_queue() -> impl Strategy<Value = (i64, Vec<(u32, Style)>)> {
    let base = prop_oneof![
        Just(i64::from(i32::MAX) - 20),
        (i64::from(i32::MIN)..=i64::from(i32::MAX)),
        (i64::from(i32::MAX) - 1000..=i64::from(i32::MAX)),
    ];
    (base, prop::collection::btree_map(0u32..(1 << 29), style(), 1..24))
        .prop_map(|(base, nodes)| (base, nodes.into_iter().collect()))
}

fn sequence(base: i64, n: u32) -> i32 {
    (base + i64::from(n)) as i32 // wraps like ZooKeeper's int counter
}

fn foreign() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec("[a-z_-]{0,12}[0-9]{0,12}", 0..5)
}

/// `parse` as it was first written, searching for each marker's last occurrence.
fn parse_by_search(name: &str) -> Option<(Role, i32)> {
    let markers = [
        ("__rlock__", Role::Reader),
        ("__READ__", Role::Reader),
        ("__lock__", Role::Writer),
        ("lock-", Role::Writer),
        ("__WRIT__", Role::Writer),
    ];
    markers.into_iter().find_map(|(marker, role)| {
        let rest = &name[name.rfind(marker)? + marker.len()..];
        let digits = rest.strip_prefix('-').unwrap_or(rest);
        let width = if digits.len() == rest.len() { digits.len() == 10 } else { matches!(digits.len(), 9 | 10) };
        (width && digits.bytes().all(|b| b.is_ascii_digit())).then(|| rest.parse().ok().map(|s| (role, s)))?
    })
}

/// Names stuck together from markers, dashes and digits: where the fast
/// reading from the end could differ from the search.
fn tricky_name() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("__lock__"),
        Just("__rlock__"),
        Just("lock-"),
        Just("__READ__"),
        Just("__WRIT__"),
        Just("-"),
        Just("0000000001"),
        Just("214748364"),
        Just("7"),
        Just("x"),
        Just("_"),
        Just("é"),
    ];
    prop::collection::vec(piece, 0..8).prop_map(|pieces| pieces.concat())
}

proptest! {
    #[test]
    fn parse_reads_a_name_as_the_marker_search_does(name in tricky_name()) {
        prop_assert_eq!(parse(&name, &[]).map(|c| (c.role, c.sequence)), parse_by_search(&name));
    }

    #[test]
    fn every_printed_sequence_parses_back(s in any::<i32>(), style in style()) {
        let parsed = parse(&style.name(7, s), &[]).expect("a contender");
        prop_assert_eq!(parsed.sequence, s);
        prop_assert_eq!(parsed.role, style.role());
    }

    #[test]
    fn queue_order_is_creation_order_across_the_wrap(
        (base, nodes) in live_queue(), foreign in foreign(), shuffle in any::<prop::sample::Index>()
    ) {
        let mut children: Vec<String> =
            nodes.iter().enumerate().map(|(id, (n, style))| style.name(id, sequence(base, *n))).collect();
        let expected = children.clone();
        children.extend(foreign.into_iter().filter(|f| parse(f, &[]).is_none()));
        let len = children.len();
        children.rotate_left(shuffle.index(len));
        let order: Vec<String> = queue(&children, &[]).into_iter().map(|c| c.name).collect();
        prop_assert_eq!(order, expected);
    }

    #[test]
    fn standing_matches_the_model(
        (base, nodes) in live_queue(), foreign in foreign(), mine in any::<prop::sample::Index>()
    ) {
        let names: Vec<String> =
            nodes.iter().enumerate().map(|(id, (n, style))| style.name(id, sequence(base, *n))).collect();
        let k = mine.index(names.len());
        let my_role = nodes[k].1.role();
        // Model: I wait for every earlier node I conflict with; I watch the latest of them.
        let blockers: Vec<usize> =
            (0..k).filter(|&j| my_role == Role::Writer || nodes[j].1.role() == Role::Writer).collect();
        let expected = match blockers.last() {
            None => Standing::Holds,
            Some(&j) => Standing::Waits { predecessor: names[j].clone(), last_blocker: blockers.len() == 1 },
        };
        let mut children = names.clone();
        children.extend(foreign.into_iter().filter(|f| parse(f, &[]).is_none()));
        children.reverse();
        prop_assert_eq!(standing(&children, &names[k], my_role, &[]), expected);
        prop_assert_eq!(standing(&children, "absent__lock__0000000001", my_role, &[]), Standing::Missing);
    }
}
