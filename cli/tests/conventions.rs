//! flock's and etcdctl's habits (issue 25): -n, -w, -E, -c, short flags,
//! `hold`, --verbose, timestamps in `watch`, a config file, exit codes in
//! --help, and the man page and completions from the same definitions.

mod common;

use std::process::Stdio;
use std::time::Duration;

use common::*;
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStderr};
use zoolock::{Acquire, Inspector, Lock, LockConfig};

/// A lock held by another session, with `identifier` as its data.
async fn held(path: &str, identifier: &str) -> (zoolock::Session, Lock) {
    let session = session().await;
    let config = LockConfig { identifier: identifier.as_bytes().to_vec(), ..LockConfig::default() };
    let lock = Lock::new(&session, path, zoolock::Kind::Mutex, config).unwrap();
    assert!(lock.acquire(Acquire::default()).await.unwrap());
    (session, lock)
}

#[tokio::test(flavor = "multi_thread")]
async fn nonblock_wait_and_conflict_exit_code_as_flock_has_them() {
    let lock = path("flock-n");
    let (_session, holder) = held(&lock, "the-holder").await;
    assert_eq!(exit_code(zoolock(&["exec", "-n", &lock, "--", "true"])).await, EXIT_TIMEOUT);
    assert_eq!(exit_code(zoolock(&["exec", "-n", "-E", "3", &lock, "--", "true"])).await, 3);
    assert_eq!(exit_code(zoolock(&["exec", "-w", "300ms", "-E", "42", &lock, "--", "true"])).await, 42);
    assert_eq!(exit_code(zoolock(&["exec", "-w", "300ms", &lock, "--", "true"])).await, EXIT_TIMEOUT);
    assert_eq!(exit_code(zoolock(&["exec", "-n", "-w", "1s", &lock, "--", "true"])).await, EXIT_BAD_INPUT);
    assert_eq!(exit_code(zoolock(&["exec", "-E", "256", &lock, "--", "true"])).await, EXIT_BAD_INPUT);
    holder.release().await.unwrap();
    assert_eq!(exit_code(zoolock(&["exec", "-n", "-E", "3", &lock, "--", "true"])).await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn dash_c_runs_a_shell_command_and_short_flags_stand_for_long_ones() {
    let lock = path("flock-c");
    let dir = scratch("flock-c");
    let out = dir.join("out");
    let command = format!("echo \"$ZOOLOCK_FENCING_TOKEN\" > {}; exit 7", out.display());
    assert_eq!(exit_code(zoolock(&["exec", &lock, "-c", &command])).await, 7);
    let token: i64 = std::fs::read_to_string(&out).unwrap().trim().parse().unwrap();
    assert!(token > 0);
    assert_eq!(exit_code(zoolock(&["exec", &lock, "-c", "true", "--", "true"])).await, EXIT_BAD_INPUT);
    assert_eq!(exit_code(zoolock(&["exec", &lock])).await, EXIT_BAD_INPUT);
    // -s (shared: read), -x (exclusive: write), -i, -k, -S, -j.
    let (_session, holder) = held(&lock, "writer").await;
    assert_eq!(exit_code(zoolock(&["exec", "-s", "-n", &lock, "-c", "true"])).await, EXIT_TIMEOUT);
    assert_eq!(exit_code(zoolock(&["exec", "-x", "-n", &lock, "-c", "true"])).await, EXIT_TIMEOUT);
    holder.release().await.unwrap();
    let pool = path("flock-pool");
    let mut child = zoolock(&["exec", "-S", "2", "-i", "short-id", "-k", "1s", &pool, "-c", "cat >/dev/null"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let observer = session().await;
    let mut inspector = Inspector::new(&observer, &pool).unwrap();
    let seen = until_participants(&mut inspector, |seen| seen.len() == 1).await;
    assert_eq!((seen[0].identifier.as_str(), seen[0].kind), ("short-id", zoolock::ParticipantKind::Lease));
    let output = zoolock(&["status", "-j", &pool]).output().await.unwrap();
    let shown: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(shown["participants"][0]["identifier"], "short-id");
    drop(child.stdin.take());
    assert_eq!(wait_exit(&mut child, Duration::from_secs(30)).await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn hold_prints_the_token_and_holds_until_interrupted() {
    let lock = path("hold");
    let mut child = zoolock(&["hold", &lock]).stdout(Stdio::piped()).spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line()).await.unwrap().unwrap().unwrap();
    let token: i64 = line.trim().parse().expect("the token on a line of its own");
    let observer = session().await;
    let mut inspector = Inspector::new(&observer, &lock).unwrap();
    let seen = until_participants(&mut inspector, |seen| seen.len() == 1).await;
    assert!(seen[0].holds);
    assert_eq!(seen[0].fencing_token, token);
    signal(child.id().unwrap() as i32, libc::SIGINT);
    assert_eq!(wait_exit(&mut child, Duration::from_secs(30)).await, 0);
    until_participants(&mut inspector, |seen| seen.is_empty()).await;
    // Taken away (the session expired): exit 74.
    let mut child = zoolock(&["hold", &lock]).stdout(Stdio::piped()).spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    tokio::time::timeout(Duration::from_secs(30), lines.next_line()).await.unwrap().unwrap().unwrap();
    let seen = until_participants(&mut inspector, |seen| seen.len() == 1).await;
    let session_id = seen[0].session_id;
    tokio::task::spawn_blocking(move || zk_harness::shared().expire(session_id)).await.unwrap().unwrap();
    assert_eq!(wait_exit(&mut child, Duration::from_secs(30)).await, EXIT_LOST);
}

#[tokio::test(flavor = "multi_thread")]
async fn verbose_tells_whom_it_waits_behind_and_the_token_it_holds_with() {
    let lock = path("verbose");
    let (_session, holder) = held(&lock, "slow-job").await;
    let (mut child, mut lines, mut said) = verbose_waiter_behind(&lock, "slow-job").await;
    holder.release().await.unwrap();
    while let Ok(Some(line)) = tokio::time::timeout(Duration::from_secs(30), lines.next_line()).await.unwrap() {
        said.push_str(&line);
        said.push('\n');
    }
    assert_eq!(wait_exit(&mut child, Duration::from_secs(30)).await, 0);
    assert!(said.contains("waiting") && said.contains("token"), "{said}");
    assert!(said.contains("released"), "{said}");
    // Each line stamped, as `watch`'s answers are (issue 36).
    for line in said.lines() {
        let (time, rest) = line.split_once(' ').unwrap_or_default();
        assert!(rfc3339(time) && rest.starts_with("zoolock: "), "{line}");
    }
}

/// A signal while `--verbose` waits (its display watching the queue) ends
/// the wait like any other:
/// the exit says which signal, and the waiter's node is gone.
#[tokio::test(flavor = "multi_thread")]
async fn a_signal_while_verbose_waits_ends_the_wait_and_leaves_no_node() {
    let lock = path("verbose-signal");
    let (_session, holder) = held(&lock, "slow-job").await;
    let (mut child, _lines, _) = verbose_waiter_behind(&lock, "slow-job").await;
    signal(child.id().unwrap() as i32, libc::SIGTERM);
    assert_eq!(wait_exit(&mut child, Duration::from_secs(30)).await, 128 + libc::SIGTERM);
    let observer = session().await;
    let mut inspector = Inspector::new(&observer, &lock).unwrap();
    let seen = until_participants(&mut inspector, |seen| seen.len() == 1).await;
    assert!(seen[0].holds && seen[0].identifier == "slow-job", "{seen:?}");
    assert!(holder.release().await.unwrap());
}

/// `zoolock exec -v` on `lock`, read until its display names `holder`:
/// the child, the rest of its stderr, and what it said so far.
async fn verbose_waiter_behind(lock: &str, holder: &str) -> (Child, Lines<BufReader<ChildStderr>>, String) {
    let mut child = zoolock(&["exec", "-v", lock, "--", "true"]).stderr(Stdio::piped()).spawn().unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut said = String::new();
    while !said.contains(holder) {
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line()).await.unwrap().unwrap().unwrap();
        said.push_str(&line);
        said.push('\n');
    }
    (child, lines, said)
}

/// `2026-11-27T10:00:00.123Z`: UTC, to the millisecond.
fn rfc3339(text: &str) -> bool {
    let shape = "dddd-dd-ddTdd:dd:dd.dddZ";
    text.len() == shape.len()
        && text.chars().zip(shape.chars()).all(|(c, s)| if s == 'd' { c.is_ascii_digit() } else { c == s })
}

#[tokio::test(flavor = "multi_thread")]
async fn watch_stamps_each_answer_with_the_time() {
    let lock = path("watch-time");
    let session = session().await;
    session.ensure_path(&lock, None).await.unwrap();
    for json in [true, false] {
        let mut args = vec!["watch", lock.as_str()];
        if json {
            args.push("--json");
        }
        let mut child = zoolock(&args).stdout(Stdio::piped()).spawn().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line()).await.unwrap().unwrap().unwrap();
        if json {
            let value: serde_json::Value = serde_json::from_str(&line).unwrap();
            assert!(rfc3339(value["time"].as_str().unwrap()), "{line}");
        } else {
            let (time, rest) = line.split_once(' ').unwrap();
            assert!(rfc3339(time) && rest.starts_with(&lock), "{line}");
        }
        signal(child.id().unwrap() as i32, libc::SIGINT);
        assert_eq!(wait_exit(&mut child, Duration::from_secs(30)).await, 0);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_config_file_gives_the_connection_and_credentials_below_flags_and_environment() {
    use std::os::unix::fs::PermissionsExt;
    let lock = path("config");
    let dir = scratch("config");
    let config = dir.join("zoolock.conf");
    std::fs::write(&config, format!("# ops\nconnect = {}\nsession-timeout = 5s\n", connect())).unwrap();
    let config = config.display().to_string();
    let bare = |args: &[&str]| {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_zoolock"));
        command.args(args).env_remove("ZOOLOCK_CONNECT").kill_on_drop(true);
        command
    };
    assert_eq!(exit_code(bare(&["--config", &config, "exec", &lock, "--", "true"])).await, 0);
    let mut from_env = bare(&["exec", &lock, "--", "true"]);
    from_env.env("ZOOLOCK_CONFIG", &config);
    assert_eq!(exit_code(from_env).await, 0);
    // The environment and flags come first.
    let mut env_first = bare(&["--connect-timeout", "300ms", "exec", &lock, "--", "true"]);
    env_first.env("ZOOLOCK_CONFIG", &config).env("ZOOLOCK_CONNECT", "127.0.0.1:1");
    assert_eq!(exit_code(env_first).await, EXIT_CONNECT);
    let flags_first =
        bare(&["--config", &config, "--connect", "127.0.0.1:1", "--connect-timeout", "300ms", "status", &lock]);
    assert_eq!(exit_code(flags_first).await, EXIT_CONNECT);
    // Credentials in it: only its owner may read it.
    let secret = dir.join("secret.conf");
    std::fs::write(&secret, format!("connect = {}\nauth = digest:locker:secret\n", connect())).unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o644)).unwrap();
    let secret = secret.display().to_string();
    assert_eq!(exit_code(bare(&["--config", &secret, "exec", &lock, "--", "true"])).await, EXIT_BAD_INPUT);
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    // Not on the command line, so no warning that it is (a cron job mailed it at every run).
    let quiet = bare(&["--config", &secret, "exec", &lock, "--", "true"]).output().await.unwrap();
    assert_eq!(quiet.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&quiet.stderr), "");
    let mut flagged = bare(&["--config", &secret, "--auth", "digest:locker:secret", "exec", &lock, "--", "true"]);
    let flagged = flagged.output().await.unwrap();
    assert!(String::from_utf8_lossy(&flagged.stderr).contains("--auth is visible"));
    let unknown = dir.join("unknown.conf");
    std::fs::write(&unknown, "conect = zk1:2181\n").unwrap();
    let unknown = unknown.display().to_string();
    assert_eq!(exit_code(bare(&["--config", &unknown, "status", &lock])).await, EXIT_BAD_INPUT);
}

#[tokio::test(flavor = "multi_thread")]
async fn help_lists_the_exit_codes_and_the_generator_writes_man_page_and_completions() {
    for args in [&["--help"][..], &["exec", "--help"]] {
        let output = zoolock(args).output().await.unwrap();
        let help = String::from_utf8(output.stdout).unwrap();
        assert!(output.status.success(), "{help}");
        for code in ["64", "66", "69", "70", "74", "75", "126", "127"] {
            assert!(help.lines().any(|l| l.trim_start().starts_with(code)), "exit {code} not in {args:?}:\n{help}");
        }
    }
    let generated = |what: &'static str| async move {
        let output = zoolock(&["--generate", what]).output().await.unwrap();
        assert!(output.status.success(), "{what}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    };
    let man = generated("man").await;
    assert!(man.contains(".TH zoolock") && man.contains("hold") && man.contains("75"), "{man}");
    // The sections operators look for, no page that is not shipped, and
    // nothing groff warns about (issue 36).
    for section in [".SH ENVIRONMENT", ".SH FILES", ".SH EXAMPLES", "ZOOLOCK_FENCING_TOKEN", "ZOOLOCK_NODE"] {
        assert!(man.contains(section), "the man page lacks {section}");
    }
    assert!(!man.contains("(1)"), "the man page points at a page not shipped");
    let page = scratch("man").join("zoolock.1");
    std::fs::write(&page, &man).unwrap();
    let groff = std::process::Command::new("groff").args(["-ww", "-man", "-Tutf8"]).arg(&page).output().unwrap();
    assert!(groff.status.success() && groff.stderr.is_empty(), "{}", String::from_utf8_lossy(&groff.stderr));
    assert!(generated("bash").await.contains("complete -F _zoolock"));
    assert!(generated("zsh").await.starts_with("#compdef zoolock"));
    assert!(generated("fish").await.contains("complete -c zoolock"));
    let hidden = String::from_utf8(zoolock(&["--help"]).output().await.unwrap().stdout).unwrap();
    assert!(!hidden.contains("--generate") && !hidden.contains("__supervise"), "{hidden}");
    assert_eq!(exit_code(zoolock(&["--generate", "word"])).await, EXIT_BAD_INPUT);
}

/// flock's long spellings (`--nb`, `--wait`, `--shared`, `--exclusive`,
/// `-e`) and, for cron, `-q`: nothing on stderr when the lock is not
/// acquired, so that a skipped run mails nothing (issue 36).
#[tokio::test(flavor = "multi_thread")]
async fn flocks_long_spellings_and_a_quiet_skip_for_cron() {
    let lock = path("flock-long");
    let (_session, holder) = held(&lock, "the-holder").await;
    assert_eq!(exit_code(zoolock(&["exec", "--nb", &lock, "--", "true"])).await, EXIT_TIMEOUT);
    assert_eq!(exit_code(zoolock(&["exec", "--wait", "300ms", &lock, "--", "true"])).await, EXIT_TIMEOUT);
    assert_eq!(exit_code(zoolock(&["exec", "--shared", "--nb", &lock, "--", "true"])).await, EXIT_TIMEOUT);
    assert_eq!(exit_code(zoolock(&["exec", "--exclusive", "--nb", &lock, "--", "true"])).await, EXIT_TIMEOUT);
    assert_eq!(exit_code(zoolock(&["exec", "-e", "-n", &lock, "--", "true"])).await, EXIT_TIMEOUT);
    let loud = zoolock(&["exec", "-n", "-E", "0", &lock, "--", "true"]).output().await.unwrap();
    assert_eq!(loud.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&loud.stderr).contains("not acquired"));
    let quiet = zoolock(&["exec", "-q", "-n", "-E", "0", &lock, "--", "true"]).output().await.unwrap();
    assert_eq!((quiet.status.code(), String::from_utf8_lossy(&quiet.stderr).into_owned()), (Some(0), String::new()));
    holder.release().await.unwrap();
}

/// A TLS file that cannot be read is a bad command line (64), said before
/// any connection, not a TLS failure (70) (issue 36).
#[tokio::test(flavor = "multi_thread")]
async fn a_missing_tls_file_is_a_usage_error() {
    let lock = path("missing-ca");
    for flag in ["--ca", "--certfile"] {
        let out = zoolock(&["exec", flag, "/nonexistent/zoolock.pem", &lock, "--", "true"]).output().await.unwrap();
        assert_eq!(out.status.code(), Some(EXIT_BAD_INPUT), "{flag}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/zoolock.pem"), "{flag}");
    }
}

/// A holder's identifier is whatever its client wrote: its control
/// characters are shown escaped, so that a newline cannot forge a row of
/// `status` (issue 36).
#[tokio::test(flavor = "multi_thread")]
async fn an_identifier_with_a_newline_cannot_forge_a_row() {
    let lock = path("forged-row");
    let (_session, holder) = held(&lock, "evil\nholds  mutex  forged\x1b[2J").await;
    let out = zoolock(&["status", &lock]).output().await.unwrap();
    let shown = String::from_utf8(out.stdout).unwrap();
    assert_eq!(shown.lines().count(), 3, "the time, the header and one row: {shown}");
    assert!(shown.contains("evil\\nholds  mutex  forged\\u{1b}[2J"), "{shown}");
    holder.release().await.unwrap();
}

/// `--acl`, zkCli's SCHEME:ID:PERMS: with digest credentials, `auth::cdrwa`
/// keeps the lock's nodes to that identity (they were world:anyone:cdrwa
/// whatever the credentials; issue 36).
#[tokio::test(flavor = "multi_thread")]
async fn acl_gives_the_lock_nodes_the_acl_asked_for() {
    // A path of its own from the root: the parents zoolock makes get the ACL
    // too (as kazoo's ensure_path gives them its default_acl), and the other
    // tests' parent must stay open to them.
    let lock = format!("/zoolock-cli-acl{}", zk_harness::unique_path("acl"));
    let args = ["exec", "--auth", "digest:locker:secret", "--acl", "auth::cdrwa", &lock, "-c", "cat >/dev/null"];
    let mut child = zoolock(&args).stdin(Stdio::piped()).spawn().unwrap();
    let options = zoolock::SessionOptions::new(connect()).digest_auth("locker", "secret");
    let observer = zoolock::Session::connect(options).await.unwrap();
    let mut inspector = Inspector::new(&observer, &lock).unwrap();
    let seen = until_participants(&mut inspector, |seen| seen.len() == 1).await;
    let (acls, _) = observer.get_acls(&seen[0].node).await.unwrap();
    assert_eq!(acls.len(), 1, "{acls:?}");
    assert_eq!((acls[0].scheme(), acls[0].permission()), ("digest", zoolock::Permission::ALL));
    assert!(acls[0].id().starts_with("locker:"), "{acls:?}");
    drop(child.stdin.take());
    assert_eq!(wait_exit(&mut child, Duration::from_secs(30)).await, 0);
    for bad in ["world:anyone", "world:anyone:x", ":anyone:r"] {
        assert_eq!(exit_code(zoolock(&["exec", "--acl", bad, &lock, "--", "true"])).await, EXIT_BAD_INPUT, "{bad}");
    }
}

/// `hold --until-eof`: a coprocess of a shell script holds the lock for the
/// rest of the script (flock's fd form), and lets go when its standard
/// input closes, as it does when the script ends (issue 36).
#[tokio::test(flavor = "multi_thread")]
async fn hold_until_eof_lets_go_when_standard_input_closes() {
    let lock = path("until-eof");
    let mut child =
        zoolock(&["hold", "--until-eof", &lock]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let token = tokio::time::timeout(Duration::from_secs(30), lines.next_line()).await.unwrap().unwrap().unwrap();
    assert!(token.parse::<i64>().unwrap() > 0, "{token}");
    let other = session().await;
    let next = Lock::mutex(&other, &lock).unwrap();
    assert!(!next.acquire(Acquire::no_wait()).await.unwrap(), "held while standard input is open");
    drop(child.stdin.take());
    assert_eq!(wait_exit(&mut child, Duration::from_secs(30)).await, 0);
    assert!(next.acquire(Acquire::no_wait()).await.unwrap(), "released once it closed");
    next.release().await.unwrap();
}
