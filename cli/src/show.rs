//! `status` and `watch`: the holders, then the waiters, of a path, as a
//! table or as JSON lines.

use std::time::{Duration, SystemTime};

use zoolock::{Inspector, Participant, ParticipantKind, Scheme, Session};

use crate::args::exit;

pub struct Show {
    pub path: String,
    pub json: bool,
}

pub async fn status(session: &Session, args: &Show) -> zoolock::Result<u8> {
    let mut inspector = Inspector::new(session, &args.path)?;
    let bound = session.options().session_timeout;
    let participants =
        tokio::time::timeout(bound, inspector.next()).await.unwrap_or(Err(zoolock::Error::ConnectionLoss(bound)))?;
    if !inspector.exists() {
        return Ok(missing(&args.path));
    }
    print(&args.path, &participants, args.json, None);
    Ok(0)
}

pub async fn watch(
    session: &Session,
    args: &Show,
    mut interrupted: impl std::future::Future<Output = ()> + Unpin,
) -> zoolock::Result<u8> {
    let mut inspector = Inspector::new(session, &args.path)?;
    let mut first = true;
    loop {
        tokio::select! {
            participants = inspector.next() => {
                let participants = participants?;
                // A lock watched before its first use: its path comes with its first holder.
                if first && !inspector.exists() {
                    eprintln!("zoolock: {}: no such node yet; watching for it", args.path);
                }
                first = false;
                print(&args.path, &participants, args.json, Some(SystemTime::now()));
            }
            _ = &mut interrupted => return Ok(0),
        }
    }
}

fn missing(path: &str) -> u8 {
    eprintln!("zoolock: {path}: no such node");
    exit::NO_PATH
}

fn kind_name(kind: ParticipantKind) -> &'static str {
    match kind {
        ParticipantKind::Lock => "lock",
        ParticipantKind::Read => "read",
        ParticipantKind::Write => "write",
        ParticipantKind::Lease => "lease",
    }
}

fn scheme_name(scheme: Option<Scheme>) -> &'static str {
    scheme.map_or("other", Scheme::name)
}

fn age(p: &Participant) -> Duration {
    SystemTime::now().duration_since(p.created).unwrap_or_default()
}

/// Prints one answer; `watch` stamps each with the time it was read
/// (RFC 3339, UTC): first on the table's first line, `time` in JSON.
fn print(path: &str, participants: &[Participant], json: bool, time: Option<SystemTime>) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let time = time.map(|time| humantime::format_rfc3339_millis(time).to_string());
    let stamped = match &time {
        Some(time) => format!("{time} {path}"),
        None => path.to_owned(),
    };
    if json {
        let list: Vec<_> = participants
            .iter()
            .map(|p| {
                serde_json::json!({
                    "node": p.node,
                    "state": if p.holds { "holds" } else { "waits" },
                    "kind": kind_name(p.kind),
                    "identifier": p.identifier,
                    "session_id": format!("{:#x}", p.session_id),
                    "scheme": scheme_name(p.scheme),
                    "created_ms": p.created.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64),
                    "age_seconds": age(p).as_secs_f64(),
                    "fencing_token": p.fencing_token,
                })
            })
            .collect();
        let mut answer = serde_json::json!({ "path": path, "participants": list });
        if let Some(time) = time {
            answer["time"] = time.into();
        }
        let _ = writeln!(out, "{answer}");
    } else if participants.is_empty() {
        let _ = writeln!(out, "{stamped}: no holders, no waiters");
    } else {
        let rows: Vec<[String; 8]> = participants
            .iter()
            .map(|p| {
                [
                    if p.holds { "holds" } else { "waits" }.to_owned(),
                    kind_name(p.kind).to_owned(),
                    visible(&p.identifier),
                    format!("{:#x}", p.session_id),
                    scheme_name(p.scheme).to_owned(),
                    crate::duration::show(age(p)),
                    p.fencing_token.to_string(),
                    p.node[p.node.rfind('/').map_or(0, |i| i + 1)..].to_owned(),
                ]
            })
            .collect();
        let header = ["STATE", "KIND", "IDENTIFIER", "SESSION", "SCHEME", "AGE", "TOKEN", "NODE"].map(String::from);
        let widths: Vec<usize> =
            (0..8).map(|i| rows.iter().chain([&header]).map(|r| r[i].chars().count()).max().unwrap_or(0)).collect();
        let _ = writeln!(out, "{stamped}");
        for row in std::iter::once(&header).chain(&rows) {
            let cells: Vec<String> = row.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect();
            let _ = writeln!(out, "{}", cells.join("  ").trim_end());
        }
    }
    let _ = out.flush();
}

/// A node's data as one table cell: its control characters escaped (`\n`,
/// `\t`, `\u{1b}`), so that whatever another client wrote can neither add
/// rows nor move the terminal's cursor.
pub fn visible(identifier: &str) -> String {
    identifier.chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect()
}
