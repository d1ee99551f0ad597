//! The `zoolock` binary against a real ZooKeeper: commands under one lock
//! never overlap, a partitioned holder's command is stopped, `status` and
//! `watch` show the tree (kazoo and Curator nodes included), exit codes.

mod common;

use std::process::Stdio;
use std::time::{Duration, Instant, SystemTime};

use common::*;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Child;
use tokio::time::timeout;
use zookeeper_client as zk;
use zoolock::{Acquire, Inspector, Lock, LockConfig};

#[tokio::test(flavor = "multi_thread")]
async fn commands_under_one_lock_never_overlap_and_see_increasing_tokens() {
    let lock = path("exec-contention");
    let dir = scratch("contention");
    let log = dir.join("log");
    // `>>` opens with O_APPEND: each line lands whole, in the order written.
    let script = format!(
        "echo \"start $$ $ZOOLOCK_FENCING_TOKEN $ZOOLOCK_NODE\" >> {log}; sleep 0.2; echo \"end $$\" >> {log}",
        log = log.display()
    );
    let children: Vec<Child> = (0..4)
        .map(|i| {
            zoolock(&["exec", &lock, "--identifier", &format!("worker-{i}"), "--", "sh", "-c", &script])
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert_eq!(wait_exit(&mut child, Duration::from_secs(60)).await, 0);
    }
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 8, "{text}");
    let mut last_token = i64::MIN;
    for pair in lines.chunks(2) {
        let start: Vec<&str> = pair[0].split(' ').collect();
        assert_eq!(start[0], "start", "{text}");
        assert_eq!(pair[1], format!("end {}", start[1]), "commands overlapped:\n{text}");
        let token: i64 = start[2].parse().expect("a fencing token");
        assert!(token > last_token, "tokens must increase:\n{text}");
        last_token = token;
        assert!(start[3].starts_with(&format!("{lock}/")) && start[3].contains("__lock__"), "{text}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_partitioned_holder_stops_its_command_within_the_session_timeout_plus_grace() {
    let lock = path("exec-partition");
    let dir = scratch("partition");
    let pid_file = dir.join("pid");
    let stopped_file = dir.join("stopped");
    // SIGTERM reaches CMD's whole process group: the sleep dies, the trap notes the time.
    let script = format!(
        "echo $$ > {pid}; trap 'date +%s.%N > {stopped}; exit 143' TERM; while :; do sleep 600; done",
        pid = pid_file.display(),
        stopped = stopped_file.display()
    );
    let (session_timeout, grace) = (Duration::from_secs(2), Duration::from_millis(500));
    let mut child = zoolock(&[
        "--session-timeout",
        "2",
        "exec",
        &lock,
        "--grace",
        "0.5",
        "--kill-after",
        "2",
        "--",
        "sh",
        "-c",
        &script,
    ])
    .spawn()
    .unwrap();
    let observer = session().await;
    let mut inspector = Inspector::new(&observer, &lock).unwrap();
    let holder = until_participants(&mut inspector, |seen| seen.len() == 1).await.remove(0);
    assert!(holder.holds);
    let zk = zk_harness::shared();
    zk.partition(holder.session_id).unwrap();
    let partitioned = SystemTime::now();
    let exited = Instant::now();
    let code = wait_exit(&mut child, Duration::from_secs(30)).await;
    let exited = exited.elapsed();
    zk.heal(holder.session_id).unwrap();
    assert_eq!(code, EXIT_LOST);
    let stopped: f64 = std::fs::read_to_string(&stopped_file).expect("CMD got no SIGTERM").trim().parse().unwrap();
    let took =
        Duration::from_secs_f64(stopped - partitioned.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs_f64());
    eprintln!("CMD stopped {took:?} after the partition, zoolock exited after {exited:?} (session timeout {session_timeout:?}, grace {grace:?})");
    assert!(took <= session_timeout + grace, "CMD stopped {took:?} after the partition");
    let pid: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    // SAFETY: signal 0 only asks whether the process exists.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    assert!(!alive, "CMD (pid {pid}) still runs");
}

/// A node created raw, as kazoo or Curator name theirs (FACTS.md).
async fn raw_node(raw: &zk::Client, parent: &str, prefix: &str, data: &str) -> String {
    let mode = zk::CreateMode::EphemeralSequential.with_acls(zk::Acls::anyone_all());
    let (_, sequence) = raw.create(&format!("{parent}/{prefix}"), data.as_bytes(), &mode).await.unwrap();
    format!("{parent}/{prefix}{sequence}")
}

#[tokio::test(flavor = "multi_thread")]
async fn status_shows_the_tree_with_kazoo_and_curator_nodes_in_queue_order() {
    let lock_path = path("status");
    let session = session().await;
    let raw = zk::Client::connect(&connect()).await.unwrap();
    let config = LockConfig { identifier: b"zoolock-holder".to_vec(), ..LockConfig::default() };
    let lock = Lock::new(&session, &lock_path, zoolock::Kind::Mutex, config).unwrap();
    assert!(lock.acquire(Acquire::default()).await.unwrap());
    let kazoo = raw_node(&raw, &lock_path, "0123456789abcdef0123456789abcdef__lock__", "kazoo-worker").await;
    let curator = raw_node(&raw, &lock_path, "_c_3f2504e0-4f89-11d3-9a0c-0305e82c3301-lock-", "10.0.0.7").await;

    let output = zoolock(&["status", &lock_path, "--json"]).output().await.unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let shown: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let participants = shown["participants"].as_array().unwrap();
    let expected = [lock.node().unwrap(), kazoo.clone(), curator.clone()];
    assert_eq!(participants.len(), 3, "{shown}");
    for (p, node) in participants.iter().zip(&expected) {
        let (data, stat) = raw.get_data(node).await.unwrap();
        assert_eq!(p["node"], node.as_str());
        assert_eq!(p["identifier"], String::from_utf8(data).unwrap().as_str());
        assert_eq!(p["session_id"], format!("{:#x}", stat.ephemeral_owner).as_str());
        assert_eq!(p["fencing_token"], stat.czxid);
        assert_eq!(p["created_ms"], stat.ctime);
        assert_eq!(p["kind"], "lock");
    }
    let states: Vec<_> = participants.iter().map(|p| p["state"].as_str().unwrap()).collect();
    assert_eq!(states, ["holds", "waits", "waits"]);
    let schemes: Vec<_> = participants.iter().map(|p| p["scheme"].as_str().unwrap()).collect();
    assert_eq!(schemes, ["kazoo", "kazoo", "curator"]);

    let output = zoolock(&["status", &lock_path]).output().await.unwrap();
    let table = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines[0], lock_path);
    assert!(lines[1].starts_with("STATE") && lines[1].contains("IDENTIFIER"), "{table}");
    for (line, (node, id)) in lines[2..].iter().zip(expected.iter().zip(["zoolock-holder", "kazoo-worker", "10.0.0.7"]))
    {
        let name = &node[node.rfind('/').unwrap() + 1..];
        assert!(line.contains(id) && line.ends_with(name), "{line:?} in\n{table}");
    }
    assert!(lines[2].starts_with("holds") && lines[3].starts_with("waits"), "{table}");
    lock.release().await.unwrap();
}

/// How many participants the next line of `watch --json` shows.
async fn shown(lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>) -> usize {
    let line = timeout(Duration::from_secs(30), lines.next_line()).await.expect("no output").unwrap().unwrap();
    let value: serde_json::Value = serde_json::from_str(&line).unwrap();
    value["participants"].as_array().unwrap().len()
}

#[tokio::test(flavor = "multi_thread")]
async fn watch_prints_each_change_until_interrupted() {
    let lock_path = path("watch");
    let session = session().await;
    // The path exists (a missing one is an error: see the status test).
    session.ensure_path(&lock_path, None).await.unwrap();
    let mut child = zoolock(&["watch", &lock_path, "--json"]).stdout(Stdio::piped()).spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert_eq!(shown(&mut lines).await, 0);
    let lock = Lock::mutex(&session, &lock_path).unwrap();
    assert!(lock.acquire(Acquire::default()).await.unwrap());
    assert_eq!(shown(&mut lines).await, 1);
    lock.release().await.unwrap();
    assert_eq!(shown(&mut lines).await, 0);
    // SAFETY: a signal to the child we started.
    unsafe { libc::kill(child.id().unwrap() as i32, libc::SIGINT) };
    assert_eq!(wait_exit(&mut child, Duration::from_secs(10)).await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn exit_codes_tell_timeout_lost_bad_input_connect_failure_and_the_commands_own() {
    let lock_path = path("codes");
    let session = session().await;
    let lock = Lock::mutex(&session, &lock_path).unwrap();
    assert!(lock.acquire(Acquire::default()).await.unwrap());
    assert_eq!(exit_code(zoolock(&["exec", &lock_path, "--timeout", "0.3", "--", "true"])).await, EXIT_TIMEOUT);
    let raw = zk::Client::connect(&connect()).await.unwrap();
    assert_eq!(raw.list_children(&lock_path).await.unwrap().len(), 1, "the timed-out exec left its node");
    lock.release().await.unwrap();

    assert_eq!(exit_code(zoolock(&["exec", &lock_path, "--", "sh", "-c", "exit 3"])).await, 3);
    assert_eq!(exit_code(zoolock(&["exec", &lock_path, "--", "/no/such/command"])).await, EXIT_NOT_FOUND);
    assert_eq!(exit_code(zoolock(&["exec", &lock_path, "--lease", "0.3", "--", "sleep", "600"])).await, EXIT_LOST);
    assert_eq!(exit_code(zoolock(&["exec", "relative", "--", "true"])).await, EXIT_BAD_INPUT);
    assert_eq!(exit_code(zoolock(&["exec", &lock_path, "--timeout=-1", "--", "true"])).await, EXIT_BAD_INPUT);
    assert_eq!(exit_code(zoolock(&["exec", &lock_path, "--read", "--write", "--", "true"])).await, EXIT_BAD_INPUT);
    let mut unreachable = zoolock(&["--connect-timeout", "0.3", "status", &lock_path]);
    unreachable.env("ZOOLOCK_CONNECT", "127.0.0.1:1");
    assert_eq!(exit_code(unreachable).await, EXIT_CONNECT);
    assert_eq!(exit_code(zoolock(&["exec", &lock_path, "--semaphore", "2", "--", "true"])).await, 0);
    assert!(raw.list_children(&lock_path).await.unwrap().is_empty());
}

/// `--scheme`: a cron job in a fleet still on DistributedLock.ZooKeeper
/// queues with its `lock-<seq>` nodes; the default scheme is refused there.
#[tokio::test(flavor = "multi_thread")]
async fn the_distributedlock_scheme_shares_a_path_with_distributedlock_services() {
    let lock_path = path("dl-scheme");
    let raw = zk::Client::connect(&connect()).await.unwrap();
    raw.mkdir(&lock_path, &zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all())).await.unwrap();
    let theirs = raw_node(&raw, &lock_path, "lock-", "").await;
    let flags = |scheme: &'static str| ["exec", "--scheme", scheme, "-n", lock_path.as_str(), "--", "true"];
    assert_eq!(exit_code(zoolock(&flags("distributedlock"))).await, EXIT_TIMEOUT);
    assert_eq!(exit_code(zoolock(&flags("kazoo"))).await, EXIT_BAD_INPUT, "mixed schemes");
    assert_eq!(exit_code(zoolock(&flags("nope"))).await, EXIT_BAD_INPUT);
    let read = ["exec", "--scheme", "distributedlock", "--read", lock_path.as_str(), "--", "true"];
    assert_eq!(exit_code(zoolock(&read)).await, EXIT_BAD_INPUT, "mutexes only");
    raw.delete(&theirs, None).await.unwrap();
    let node = ["exec", "--scheme", "distributedlock", lock_path.as_str(), "--", "sh", "-c", "echo $ZOOLOCK_NODE"];
    let output = zoolock(&node).output().await.unwrap();
    let shown = String::from_utf8(output.stdout).unwrap();
    assert!(shown.trim_end().strip_prefix(&format!("{lock_path}/lock-")).is_some_and(|s| s.len() == 10), "{shown}");
    assert!(raw.list_children(&lock_path).await.unwrap().is_empty());
}

/// -n and -w count the connect: with no server up, they give up in their
/// time (at least a healthy connect's, 1 s), not the connect timeout's 15 s.
#[tokio::test(flavor = "multi_thread")]
async fn a_wait_bounds_the_connect_too() {
    let lock_path = path("connect-wait");
    for wait in [&["-n"][..], &["-w", "2s"][..]] {
        let mut args = vec!["exec"];
        args.extend_from_slice(wait);
        args.extend_from_slice(&[&lock_path, "--", "true"]);
        let mut unreachable = zoolock(&args);
        unreachable.env("ZOOLOCK_CONNECT", "127.0.0.1:1");
        let started = std::time::Instant::now();
        assert_eq!(exit_code(unreachable).await, EXIT_CONNECT);
        let took = started.elapsed();
        assert!(took < Duration::from_secs(5), "{wait:?} with no server took {took:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn durations_take_units_and_are_bounded() {
    let lock = path("exec-durations");
    assert_eq!(exit_code(zoolock(&["exec", &lock, "--grace", "1e300", "--", "true"])).await, EXIT_BAD_INPUT);
    assert_eq!(exit_code(zoolock(&["exec", &lock, "--kill-after", "1000000d", "--", "true"])).await, EXIT_BAD_INPUT);
    let observer = session().await;
    let holder = Lock::mutex(&observer, &lock).unwrap();
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    let output = zoolock(&["--session-timeout", "5s", "exec", &lock, "--timeout", "250ms", "--", "true"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(EXIT_TIMEOUT), "{stderr}");
    assert!(stderr.contains("within 250ms"), "{stderr}");
    holder.release().await.unwrap();
    assert_eq!(exit_code(zoolock(&["exec", &lock, "--timeout", "1m", "--kill-after", "1.5s", "--", "true"])).await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn signals_reach_the_command_which_decides_the_exit() {
    let lock_path = path("signals");
    let script = "trap 'exit 9' HUP; echo ready; while :; do sleep 0.05; done";
    let mut child = zoolock(&["exec", &lock_path, "--", "sh", "-c", script]).stdout(Stdio::piped()).spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let ready = timeout(Duration::from_secs(30), lines.next_line()).await.expect("CMD never started").unwrap();
    assert_eq!(ready.as_deref(), Some("ready"));
    // SAFETY: a signal to the child we started.
    unsafe { libc::kill(child.id().unwrap() as i32, libc::SIGHUP) };
    assert_eq!(wait_exit(&mut child, Duration::from_secs(10)).await, 9);
}

/// A file only its owner may read (`mode` 0o600), or others too.
fn secret_file(dir: &std::path::Path, name: &str, text: &str, mode: u32) -> String {
    use std::os::unix::fs::PermissionsExt;
    let file = dir.join(name);
    std::fs::write(&file, text).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
    file.display().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn digest_credentials_come_from_the_environment_or_a_private_file() {
    let parent = path("secure");
    let lock = format!("{parent}/lock");
    let raw = zk::Client::connect(&connect()).await.unwrap();
    raw.auth("digest", b"locker:secret").await.unwrap();
    let parents = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
    let _ = raw.create("/zoolock-cli-tests", b"", &parents).await;
    // Only `locker` may create lock nodes under it.
    raw.create(&parent, b"", &zk::CreateMode::Persistent.with_acls(zk::Acls::creator_all())).await.unwrap();
    let dir = scratch("credentials");

    assert_eq!(exit_code(zoolock(&["exec", &lock, "--", "true"])).await, EXIT_ERROR, "no credentials, yet allowed");
    let mut from_env = zoolock(&["exec", &lock, "--", "true"]);
    from_env.env("ZOOLOCK_AUTH", "digest:locker:secret");
    assert_eq!(exit_code(from_env).await, 0);
    let private = secret_file(&dir, "private", "# the lock's user\ndigest:locker:secret\n", 0o600);
    assert_eq!(exit_code(zoolock(&["exec", &lock, "--auth-file", &private, "--", "true"])).await, 0);
    for mode in [0o640, 0o604] {
        let shared = secret_file(&dir, "shared", "digest:locker:secret\n", mode);
        let output = zoolock(&["exec", &lock, "--auth-file", &shared, "--", "true"]).output().await.unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(EXIT_BAD_INPUT), "mode {mode:o}: {stderr}");
        assert!(stderr.contains("chmod 600"), "{stderr}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn tls_and_sasl_flags_reach_a_server_that_needs_both() {
    let options = zk_harness::Options {
        tls: Some(zk_harness::Tls { client_auth: true, self_signed: false }),
        sasl: Some(zk_harness::Sasl { users: vec![("locker".into(), "pw".into())], required: true }),
        ..zk_harness::Options::default()
    };
    let zk = tokio::task::spawn_blocking(move || zk_harness::Ensemble::start(1, options)).await.unwrap().unwrap();
    let secure = zk.secure_connect_string("localhost").unwrap();
    let files = zk.tls_files().unwrap().clone();
    let dir = scratch("tls");
    let key = secret_file(&dir, "client.key", &std::fs::read_to_string(&files.client_key).unwrap(), 0o600);
    let password = secret_file(&dir, "sasl-password", "pw\n", 0o600);
    let (ca, cert) = (files.ca.display().to_string(), files.client_cert.display().to_string());
    let lock = path("tls");
    let tls = ["--ca", ca.as_str(), "--certfile", cert.as_str(), "--keyfile", key.as_str()];
    let mut args = vec!["--tls"];
    args.extend(tls);
    args.extend(["--sasl-username", "locker", "--sasl-password-file", &password, "exec", &lock, "--", "true"]);
    assert_eq!(exit_code(zoolock_on(&secure, &args)).await, 0);
    // The password from the environment; without SASL the server refuses the session.
    let mut args = tls.to_vec();
    args.extend(["--sasl-username", "locker", "exec", &lock, "--", "true"]);
    let mut from_env = zoolock_on(&secure, &args);
    from_env.env("ZOOLOCK_SASL_PASSWORD", "pw");
    assert_eq!(exit_code(from_env).await, 0);
    let mut args = tls.to_vec();
    args.extend(["--connect-timeout", "3s", "exec", &lock, "--", "true"]);
    assert_ne!(exit_code(zoolock_on(&secure, &args)).await, 0);
    // A private key others can read is refused.
    let mut args = vec!["--tls", "--ca", ca.as_str(), "--certfile", cert.as_str(), "--keyfile"];
    let shared_key = files.client_key.display().to_string();
    args.extend([shared_key.as_str(), "status", &lock]);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&files.client_key, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(exit_code(zoolock_on(&secure, &args)).await, EXIT_BAD_INPUT);
}

/// `--tls` without `--ca` trusts the system's CAs as OpenSSL finds them:
/// `SSL_CERT_FILE` names a bundle holding the ensemble's CA (the machine's
/// own bundle does not, and is refused).
#[tokio::test(flavor = "multi_thread")]
async fn tls_without_a_ca_trusts_the_systems_cas_and_openssls_variables() {
    let options = zk_harness::Options {
        tls: Some(zk_harness::Tls { client_auth: false, self_signed: false }),
        ..zk_harness::Options::default()
    };
    let zk = tokio::task::spawn_blocking(move || zk_harness::Ensemble::start(1, options)).await.unwrap().unwrap();
    let secure = zk.secure_connect_string("localhost").unwrap();
    let ca = zk.tls_files().unwrap().ca.clone();
    let lock = path("system-ca");
    let args = ["--tls", "--connect-timeout", "3s", "exec", &lock, "--", "true"];
    let mut trusted = zoolock_on(&secure, &args);
    trusted.env("SSL_CERT_FILE", &ca).env_remove("SSL_CERT_DIR");
    assert_eq!(exit_code(trusted).await, 0);
    let mut machine_only = zoolock_on(&secure, &args);
    machine_only.env_remove("SSL_CERT_FILE").env_remove("SSL_CERT_DIR");
    assert_ne!(exit_code(machine_only).await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn status_counts_leases_only_of_a_real_semaphore_and_says_when_a_path_is_missing() {
    let raw = zk::Client::connect(&connect()).await.unwrap();
    let persistent = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
    // A plain node whose data is a number, with children that are not leases.
    let workers = path("workers");
    let _ = raw.create("/zoolock-cli-tests", b"", &persistent).await;
    raw.create(&workers, b"3", &persistent).await.unwrap();
    for child in ["alpha", "beta"] {
        raw.create(&format!("{workers}/{child}"), b"", &persistent).await.unwrap();
    }
    let output = zoolock(&["status", &workers, "--json"]).output().await.unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let shown: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(shown["participants"].as_array().unwrap().len(), 0, "{shown}");

    // A semaphore's leases are still shown.
    let pool = path("pool");
    let session = session().await;
    let semaphore = zoolock::Semaphore::new(&session, &pool, "encoder-1", 2).unwrap();
    assert!(semaphore.acquire(Acquire::default()).await.unwrap());
    let output = zoolock(&["status", &pool, "--json"]).output().await.unwrap();
    let shown: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let participants = shown["participants"].as_array().unwrap();
    assert_eq!(participants.len(), 1, "{shown}");
    assert_eq!(
        (participants[0]["kind"].as_str(), participants[0]["identifier"].as_str()),
        (Some("lease"), Some("encoder-1"))
    );
    semaphore.release().await.unwrap();

    let missing = path("no-such-lock");
    let output = zoolock(&["status", &missing]).output().await.unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(EXIT_NO_PATH), "{stderr}");
    assert!(stderr.contains("no such node"), "{stderr}");

    // `watch` of a lock before its first use waits for it (issue 36): it
    // answered 66, as `status` does for a typo.
    let mut child = zoolock(&["watch", &missing, "--json"]).stdout(Stdio::piped()).spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    async fn next(lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>) -> serde_json::Value {
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line()).await.expect("an answer");
        serde_json::from_str(&line.unwrap().expect("watch went on")).unwrap()
    }
    assert_eq!(next(&mut lines).await["participants"].as_array().unwrap().len(), 0);
    let first = Lock::mutex(&session, &missing).unwrap();
    assert!(first.acquire(Acquire::default()).await.unwrap());
    let mut shown = next(&mut lines).await;
    while shown["participants"].as_array().unwrap().is_empty() {
        shown = next(&mut lines).await; // the path came before its first node
    }
    assert_eq!(shown["participants"][0]["state"].as_str(), Some("holds"), "{shown}");
    signal(child.id().unwrap() as i32, libc::SIGINT);
    assert_eq!(wait_exit(&mut child, Duration::from_secs(30)).await, 0);
    first.release().await.unwrap();
}
