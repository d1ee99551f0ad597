//! The Rust side of each catalogue entry (tests/bad_inputs.txt): the bad
//! calls, each result handed to `Ctx::check`. A case holds and releases what
//! its set-up needs; the runner then looks for nodes left behind.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};

use zk_harness::tls::TlsFiles;
use zk_harness::{Ensemble, Options, Sasl, Tls};
use zookeeper_client as zk;
use zoolock::{
    timeout_from_secs, try_lease, try_multi_lease, Acl, Acquire, AuthId, Barrier, ClientId, Counter, Create,
    DoubleBarrier, Kind, Lock, LockConfig, LockingQueue, MultiLock, Owner, Party, Permission, PersistentNode, Queue,
    SaslMechanism, SaslOptions, Semaphore, Session, SessionOptions, TlsOptions, MAX_IDENTIFIER_BYTES, MAX_PATH_BYTES,
};

use super::common::{raw, until_children};
use super::Ctx;

pub type Case = fn(Arc<Ctx>) -> Pin<Box<dyn Future<Output = ()> + Send>>;

macro_rules! cases {
    ($($id:literal => |$c:ident| $body:expr),* $(,)?) => {
        vec![$(($id, {
            fn run($c: Arc<Ctx>) -> Pin<Box<dyn Future<Output = ()> + Send>> { Box::pin($body) }
            run as Case
        })),*]
    };
}

const KINDS: [Kind; 3] = [Kind::Mutex, Kind::Read, Kind::Write];
const SHORT: Duration = Duration::from_millis(500);
const PATIENCE: Duration = Duration::from_secs(5);
const HOUR: Duration = Duration::from_secs(3600);

pub fn all() -> Vec<(&'static str, Case)> {
    cases![
        "path-empty" => |c| bad_path(c, String::new()),
        "path-relative" => |c| bad_path(c, "locks/x".into()),
        "path-root" => |c| bad_path(c, "/".into()),
        "path-trailing-slash" => |c| bad_path(c, "/locks/x/".into()),
        "path-double-slash" => |c| bad_path(c, "/locks//x".into()),
        "path-dot" => |c| bad_path(c, "/locks/./x".into()),
        "path-dotdot" => |c| bad_path(c, "/locks/../x".into()),
        "path-nul" => |c| bad_path(c, "/locks/x\0y".into()),
        "path-control-char" => |c| bad_path(c, "/locks/x\u{1}y".into()),
        "path-private-use" => |c| bad_path(c, "/locks/x\u{e000}".into()),
        "path-reserved" => |c| bad_path(c, "/zookeeper".into()),
        "path-reserved-child" => |c| bad_path(c, "/zookeeper/locks".into()),
        "path-too-long" => |c| bad_path(c, format!("/{}", "p".repeat(MAX_PATH_BYTES))),
        "limits-fit-one-request" => |c| limits_fit(c),
        "identifier-not-utf8" => |c| bad_identifier(c, vec![0xff, 0xfe]),
        "identifier-too-large" => |c| bad_identifier(c, vec![b'x'; MAX_IDENTIFIER_BYTES + 1]),
        "connect-empty" => |c| bad_connect(c, ""),
        "connect-chroot-only" => |c| bad_connect(c, "/app"),
        "connect-hosts-empty" => |c| bad_connect(c, " , ,/app"),
        "connect-host-whitespace" => |c| bad_connect(c, "zk 1:2181"),
        "connect-bracket-port-empty" => |c| bad_connect(c, "[::1]:"),
        "connect-port-not-number" => |c| bad_connect(c, "127.0.0.1:abc"),
        "connect-port-signed" => |c| bad_connect(c, "127.0.0.1:+2181"),
        "connect-port-zero" => |c| bad_connect(c, "127.0.0.1:0"),
        "connect-port-too-large" => |c| bad_connect(c, "127.0.0.1:65536"),
        "connect-too-many-colons" => |c| bad_connect(c, "zk1:2181:2181"),
        "connect-bracket-unclosed" => |c| bad_connect(c, "[::1:2181"),
        "connect-chroot-trailing-slash" => |c| bad_connect(c, "127.0.0.1:2181/app/"),
        "connect-chroot-reserved" => |c| bad_connect(c, "127.0.0.1:2181/zookeeper"),
        "server-unreachable" => |c| async move {
            let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            let options = SessionOptions::new(format!("127.0.0.1:{port}")).connect_timeout(Duration::from_secs(1));
            c.check("connect", c.connect(options).await);
        },
        "connect-no-port-unreachable" => |c| async move {
            let options = SessionOptions::new("192.0.2.1").connect_timeout(Duration::from_secs(1));
            c.check("connect", c.connect(options).await);
        },
        "missing-chroot" => |c| async move {
            let options = SessionOptions::new(format!("{}/zoolock-no-such-chroot", c.connect));
            c.check("connect", c.connect(options).await);
        },
        "session-timeout-zero" => |c| async move {
            let options = SessionOptions::new(c.connect.clone()).session_timeout(Duration::ZERO);
            c.check("connect", c.connect(options).await);
        },
        "session-timeout-too-large" => |c| async move {
            for timeout in [Duration::from_secs(30 * 86_400), Duration::MAX] {
                let options = SessionOptions::new(c.connect.clone()).session_timeout(timeout);
                c.check(&format!("connect with {timeout:?}"), c.connect(options).await);
            }
        },
        "resume-bad-client-id" => |c| async move {
            for id in [ClientId::new(0, [1u8; 16]), ClientId::new(7, [1u8; 15])] {
                let options = SessionOptions::new(c.connect.clone()).resume(id.clone());
                c.check(&format!("connect resuming {id:?}"), c.connect(options).await);
            }
        },
        "resume-ended-session" => |c| async move {
            let ended = Session::connect(SessionOptions::new(c.connect.clone())).await.unwrap();
            let id = ended.client_id().unwrap();
            ended.close().await;
            c.check("connect", c.connect(SessionOptions::new(c.connect.clone()).resume(id)).await);
        },
        "connect-timeout-zero" => |c| async move {
            let options = SessionOptions::new(c.connect.clone()).connect_timeout(Duration::ZERO);
            c.check("connect", c.connect(options).await);
        },
        "timeout-negative" => |c| async move { c.check("timeout_from_secs(-1)", timeout_from_secs(Some(-1.0))) },
        "timeout-nan" => |c| async move { c.check("timeout_from_secs(NaN)", timeout_from_secs(Some(f64::NAN))) },
        "timeout-infinite" => |c| async move {
            let forever = timeout_from_secs(Some(f64::INFINITY)).unwrap();
            acquire_both(c, Acquire { timeout: forever, ..Acquire::default() }).await
        },
        "timeout-too-large" => |c| acquire_both(c, Acquire::timeout(Duration::MAX)),
        "timeout-without-blocking" => |c| {
            acquire_both(c, Acquire { blocking: false, timeout: Some(Duration::from_secs(1)), ..Acquire::default() })
        },
        "lease-zero" => |c| acquire_both(c, Acquire::default().lease(Duration::ZERO)),
        "lease-negative" => |c| async move { c.check("timeout_from_secs(-1) as a lease", timeout_from_secs(Some(-1.0))) },
        "semaphore-max-leases-zero" => |c| async move {
            let s = c.session().await;
            c.check("semaphore", Semaphore::new(&s, &c.path("pool"), "", 0));
        },
        "semaphore-max-leases-inconsistent" => |c| async move {
            let s = c.session().await;
            let first = Semaphore::new(&s, &c.path("pool"), "first", 2).unwrap();
            assert!(first.acquire(Acquire::timeout(PATIENCE)).await.unwrap());
            let other = Semaphore::new(&s, &c.path("pool"), "other", 3).unwrap();
            c.check("acquire", other.acquire(Acquire::timeout(PATIENCE)).await);
            assert_eq!(first.queue().await.unwrap(), ["first"]);
            assert!(first.release().await.unwrap());
        },
        "release-without-acquire" => |c| async move {
            let s = c.session().await;
            for kind in KINDS {
                let lock = Lock::new(&s, &c.path("lock"), kind, LockConfig::default()).unwrap();
                c.check(&format!("{kind:?} release"), lock.release().await);
            }
            c.check("semaphore release", Semaphore::new(&s, &c.path("pool"), "", 1).unwrap().release().await);
        },
        "double-release" => |c| async move {
            let (lock, semaphore) = held(&c).await;
            assert!(lock.release().await.unwrap() && semaphore.release().await.unwrap());
            c.check("second lock release", lock.release().await);
            c.check("second semaphore release", semaphore.release().await);
        },
        "acquire-again-while-held" => |c| again_while_held(c, Acquire::timeout(SHORT)),
        "try-again-while-held" => |c| again_while_held(c, Acquire::no_wait()),
        "reentrant-acquire-by-non-owner" => |c| async move {
            let lock = reentrant_held(&c).await;
            c.check("acquire by another owner", lock.acquire(Acquire::timeout(SHORT).owner(OTHER)).await);
            c.check("try by another owner", lock.acquire(Acquire::no_wait().owner(OTHER)).await);
            reentrant_let_go(lock).await;
        },
        "reentrant-release-by-non-owner" => |c| async move {
            let lock = reentrant_held(&c).await;
            c.check("release_by another owner", lock.release_by(OTHER).await);
            c.check("release, the handle's own", lock.release().await);
            reentrant_let_go(lock).await;
        },
        "semaphore-again-while-held" => |c| async move {
            let (lock, semaphore) = held(&c).await;
            c.check("semaphore acquire again", semaphore.acquire(Acquire::timeout(SHORT)).await);
            c.check("semaphore try again", semaphore.acquire(Acquire::no_wait()).await);
            assert!(lock.release().await.unwrap() && semaphore.release().await.unwrap());
            assert!(!semaphore.release().await.unwrap(), "one lease, given back by one release");
        },
        "acquire-after-close" => |c| async move {
            let s = c.session().await;
            let lock = Lock::mutex(&s, &c.path("lock")).unwrap();
            let semaphore = Semaphore::new(&s, &c.path("pool"), "", 1).unwrap();
            s.close().await;
            c.check("lock acquire", lock.acquire(Acquire::default()).await);
            c.check("semaphore acquire", semaphore.acquire(Acquire::default()).await);
        },
        "lock-after-close" => |c| async move {
            let s = c.session().await;
            s.close().await;
            for kind in KINDS {
                c.check(&format!("{kind:?} lock"), Lock::new(&s, &c.path("lock"), kind, LockConfig::default()));
            }
            c.check("semaphore", Semaphore::new(&s, &c.path("pool"), "", 1));
        },
        "query-after-close" => |c| async move {
            let s = c.session().await;
            let lock = Lock::mutex(&s, &c.path("lock")).unwrap();
            let semaphore = Semaphore::new(&s, &c.path("pool"), "", 1).unwrap();
            s.close().await;
            c.check("contenders", lock.queue().await);
            c.check("lease_holders", semaphore.queue().await);
        },
        "release-after-close" => |c| async move {
            let (lock, semaphore) = held(&c).await;
            lock.session().close().await;
            c.check("lock release", lock.release().await);
            c.check("semaphore release", semaphore.release().await);
        },
        "waiting-when-closed" => |c| async move {
            let (lock, semaphore) = held(&c).await;
            let raw = raw(&c.connect).await;
            let waiting_lock = Lock::mutex(lock.session(), lock.path()).unwrap();
            let lock_waiter = tokio::spawn(async move { waiting_lock.acquire(Acquire::default()).await });
            let waiting_semaphore = Semaphore::new(lock.session(), semaphore.path(), "", 1).unwrap();
            let semaphore_waiter = tokio::spawn(async move { waiting_semaphore.acquire(Acquire::default()).await });
            until_children(&raw, lock.path(), "the waiter", |c| c.len() == 2).await;
            until_children(&raw, &format!("{}-__lock__", semaphore.path()), "the waiter", |c| c.len() == 1).await;
            lock.session().close().await;
            c.check("queued lock acquire", lock_waiter.await.unwrap());
            c.check("queued semaphore acquire", semaphore_waiter.await.unwrap());
        },
        "close-twice" => |c| async move {
            let s = c.session().await;
            s.close().await;
            s.close().await;
            c.check("second close", Ok(()));
        },
        "cancel-while-waiting" => |c| async move {
            let (lock, semaphore) = held(&c).await;
            let raw = raw(&c.connect).await;
            let waiting_lock = Lock::mutex(lock.session(), lock.path()).unwrap();
            let waiting_semaphore = Semaphore::new(lock.session(), semaphore.path(), "", 1).unwrap();
            let lock_waiter = tokio::spawn({
                let waiting = waiting_lock.clone();
                async move { waiting.acquire(Acquire::default()).await }
            });
            let semaphore_waiter = tokio::spawn({
                let waiting = waiting_semaphore.clone();
                async move { waiting.acquire(Acquire::default()).await }
            });
            until_children(&raw, lock.path(), "the waiter", |c| c.len() == 2).await;
            until_children(&raw, &format!("{}-__lock__", semaphore.path()), "the waiter", |c| c.len() == 1).await;
            waiting_lock.cancel();
            waiting_semaphore.cancel();
            c.check("queued lock acquire", lock_waiter.await.unwrap());
            c.check("queued semaphore acquire", semaphore_waiter.await.unwrap());
            assert_eq!(super::common::children(&raw, lock.path()).await.len(), 1, "the holder's node alone");
            assert!(lock.release().await.unwrap() && semaphore.release().await.unwrap());
        },
        "cancel-with-nothing-pending" => |c| async move {
            let s = c.session().await;
            let lock = Lock::mutex(&s, &c.path("lock")).unwrap();
            let semaphore = Semaphore::new(&s, &c.path("pool"), "", 1).unwrap();
            lock.cancel();
            semaphore.cancel();
            c.check("lock acquire", lock.acquire(Acquire::timeout(PATIENCE)).await);
            c.check("semaphore acquire", semaphore.acquire(Acquire::timeout(PATIENCE)).await);
            assert!(lock.release().await.unwrap() && semaphore.release().await.unwrap());
        },
        "recipe-path-invalid" => |c| recipes_on_bad_path(c, "recipes/x"),
        "queue-priority-out-of-range" => |c| async move {
            let s = c.session().await;
            let (queue, locking) = (Queue::new(&s, &c.path("queue")).unwrap(), LockingQueue::new(&s, &c.path("jobs")).unwrap());
            c.check("Queue put", queue.put(b"x", 1000).await.map(drop));
            c.check("LockingQueue put", locking.put(b"x", 1000).await.map(drop));
            c.check("LockingQueue put_all", locking.put_all(&[b"x".to_vec()], 1000).await);
            assert_eq!((queue.len().await.unwrap(), locking.len().await.unwrap()), (0, 0), "nothing put");
        },
        "multi-lock-no-paths" => |c| async move {
            let s = c.session().await;
            c.check("MultiLock of no paths", MultiLock::new(&s, Vec::<String>::new(), "").map(drop));
        },
        "double-barrier-no-clients" => |c| async move {
            let s = c.session().await;
            c.check("DoubleBarrier of 0", DoubleBarrier::new(&s, &c.path("barrier"), 0, "").map(drop));
        },
        "acl-empty" => |c| async move {
            let s = c.session().await;
            let path = c.path("node");
            s.create(&path, Some(b""), &Create::default().makepath()).await.unwrap();
            c.check("set_acls to []", s.set_acls(&path, &[], None).await.map(drop));
            assert_eq!(s.get_acls(&path).await.unwrap().0, [Acl::new(Permission::ALL, AuthId::anyone())], "unchanged");
        },
        "transaction-too-large" => |c| async move {
            let s = c.session().await;
            let big = vec![b'x'; 700_000];
            let transaction = s.transaction().create(&c.path("a"), Some(&big), Create::default()).create(
                &c.path("b"),
                Some(&big),
                Create::default(),
            );
            s.create(&c.base, Some(b""), &Create::default().makepath()).await.unwrap();
            c.check("commit", transaction.commit().await.map(drop));
            let jobs = LockingQueue::new(&s, &c.path("jobs")).unwrap();
            c.check("LockingQueue put_all", jobs.put_all(&[big.clone(), big], 100).await);
            assert_eq!(s.children(&c.base).await.unwrap().len(), 1, "nothing made but the queue's path");
            assert_eq!(jobs.len().await.unwrap(), 0, "nothing put");
        },
        "recipe-after-close" => |c| async move {
            let s = c.session().await;
            let path = c.path("node");
            s.create(&path, Some(b""), &Create::default().makepath()).await.unwrap();
            let barrier = Barrier::new(&s, &c.path("barrier")).unwrap();
            let double = DoubleBarrier::new(&s, &c.path("double"), 2, "").unwrap();
            let party = Party::new(&s, &c.path("party"), "").unwrap();
            let node = PersistentNode::new(&s, &c.path("registry/n"), b"".to_vec()).unwrap();
            let queue = Queue::new(&s, &c.path("queue")).unwrap();
            let locking = LockingQueue::new(&s, &c.path("jobs")).unwrap();
            let counter = Counter::new(&s, &c.path("counter"), 0).unwrap();
            let multi = MultiLock::new(&s, [c.path("a"), c.path("b")], "").unwrap();
            let transaction = s.transaction().create(&c.path("t"), Some(b""), Create::default());
            s.close().await;
            c.check("Barrier create", barrier.create().await);
            c.check("Barrier wait", barrier.wait(Some(PATIENCE)).await.map(drop));
            c.check("DoubleBarrier enter", double.enter().await);
            c.check("Party join", party.join().await);
            c.check("PersistentNode start", node.start().await);
            c.check("Queue put", queue.put(b"x", 100).await.map(drop));
            c.check("Queue get", queue.get().await.map(drop));
            c.check("LockingQueue put", locking.put(b"x", 100).await.map(drop));
            c.check("LockingQueue put_all", locking.put_all(&[b"x".to_vec()], 100).await);
            c.check("LockingQueue get", locking.get(Some(PATIENCE)).await.map(drop));
            c.check("Counter value", counter.value().await.map(drop));
            c.check("Counter add", counter.add(1).await.map(drop));
            c.check("lease", try_lease(&s, &c.path("lease"), HOUR, "a", SystemTime::now()).await.map(drop));
            c.check("MultiLock acquire", multi.acquire(Acquire::timeout(PATIENCE)).await.map(drop));
            c.check("get_acls", s.get_acls(&path).await.map(drop));
            c.check("set_acls", s.set_acls(&path, &[Acl::new(Permission::ALL, AuthId::anyone())], None).await.map(drop));
            c.check("add_auth", s.add_auth("digest", b"user:pw").await);
            c.check("transaction commit", transaction.commit().await.map(drop));
        },
        "acl-forbids-create" => |c| async move {
            let raw = raw(&c.connect).await;
            let open = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
            let read_only = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_read());
            raw.mkdir(&c.base, &open).await.unwrap();
            raw.create(&c.path("read-only"), b"", &read_only).await.unwrap();
            let s = c.session().await;
            let lock = Lock::mutex(&s, &c.path("read-only")).unwrap();
            c.check("lock acquire", lock.acquire(Acquire::timeout(PATIENCE)).await);
            let semaphore = Semaphore::new(&s, &c.path("read-only/pool"), "", 1).unwrap();
            c.check("semaphore acquire", semaphore.acquire(Acquire::timeout(PATIENCE)).await);
        },
        "lock-under-ephemeral" => |c| async move {
            let (lock, semaphore) = held(&c).await;
            let ephemeral = lock.node().unwrap();
            for kind in KINDS {
                let below = Lock::new(lock.session(), &ephemeral, kind, LockConfig::default()).unwrap();
                c.check(&format!("{kind:?} acquire"), below.acquire(Acquire::timeout(PATIENCE)).await);
            }
            let below = Semaphore::new(lock.session(), &format!("{ephemeral}/pool"), "", 1).unwrap();
            c.check("semaphore acquire", below.acquire(Acquire::timeout(PATIENCE)).await);
            assert!(lock.release().await.unwrap() && semaphore.release().await.unwrap());
        },
        "chroot-deleted" => |c| async move {
            let s = c.session().await;
            let lock = Lock::mutex(&s, &c.path("lock")).unwrap();
            assert!(lock.acquire(Acquire::timeout(PATIENCE)).await.unwrap());
            let chroot = lock.node().unwrap();
            let inside = c.connect(SessionOptions::new(format!("{}{chroot}", c.connect))).await.unwrap();
            assert!(lock.release().await.unwrap());
            for kind in KINDS {
                let below = Lock::new(&inside, "/locks/x", kind, LockConfig::default()).unwrap();
                c.check(&format!("{kind:?} acquire"), below.acquire(Acquire::timeout(PATIENCE)).await);
            }
            let below = Semaphore::new(&inside, "/pools/x", "", 1).unwrap();
            c.check("semaphore acquire", below.acquire(Acquire::timeout(PATIENCE)).await);
        },
        "tls-wrong-ca" => |c| secure(c, Mode::Tls, |zk| by_name(zk).tls(TlsOptions::new().ca(files(zk).other_ca.as_path()))),
        "tls-no-client-cert" => |c| secure(c, Mode::MutualTls, |zk| by_name(zk).tls(trusting(zk))),
        "tls-untrusted-client-cert" => |c| secure(c, Mode::MutualTls, |zk| {
            let f = files(zk);
            by_name(zk).tls(trusting(zk).certfile(f.stranger_cert.as_path()).keyfile(f.stranger_key.as_path()))
        }),
        "tls-key-password-wrong" => |c| secure(c, Mode::MutualTls, |zk| by_name(zk).tls(encrypted_key(zk).keyfile_password("not-the-pw"))),
        "tls-key-password-missing" => |c| secure(c, Mode::MutualTls, |zk| by_name(zk).tls(encrypted_key(zk))),
        "tls-plaintext-to-secure-port" => |c| secure(c, Mode::Tls, |zk| by_ip(zk)),
        "tls-to-plain-port" => |c| secure(c, Mode::Tls, |zk| {
            SessionOptions::new(zk.direct_connect_string()).tls(trusting(zk).check_hostname(false))
        }),
        "tls-hostname-mismatch" => |c| secure(c, Mode::Tls, |zk| by_ip(zk).tls(trusting(zk))),
        "tls-verify-certs-off" => |c| secure(c, Mode::Tls, |zk| by_name(zk).tls(trusting(zk).verify_certs(false).check_hostname(false))),
        "tls-check-hostname-without-verify" => |c| secure(c, Mode::Tls, |zk| by_name(zk).tls(trusting(zk).verify_certs(false))),
        "tls-host-rustls-cannot-name" => |c| async move {
            let zk = server(Mode::Tls);
            let hosts = zk.secure_connect_string("127.1").unwrap();
            for check_hostname in [true, false] {
                let options = SessionOptions::new(hosts.as_str()).tls(trusting(zk).check_hostname(check_hostname));
                let refused = c.connect(options).await;
                if let Err(zoolock::Error::InvalidConnectString { reason, .. }) = &refused {
                    assert!(reason.contains("\"127.1\""), "the host is not named: {reason}");
                }
                c.check(&format!("connect, host name check {check_hostname}"), refused);
            }
        },
        "sasl-wrong-password" => |c| secure(c, Mode::Sasl, |zk| {
            SessionOptions::new(zk.connect_string()).sasl(SaslOptions::digest_md5(SASL_USER, "wrong-pw"))
        }),
        "sasl-missing-where-required" => |c| secure(c, Mode::Sasl, |zk| SessionOptions::new(zk.connect_string())),
        "sasl-unknown-mechanism" => |c| async move {
            for name in ["PLAIN", "GSSAPI"] {
                c.check(name, SaslMechanism::from_name(name).map(drop));
            }
        },
    ]
}

/// The servers of the TLS and SASL entries, each its own ensemble.
#[derive(Clone, Copy)]
pub enum Mode {
    /// TLS, `ssl.clientAuth=none`.
    Tls,
    /// TLS, `ssl.clientAuth=need`.
    MutualTls,
    /// SASL DIGEST-MD5 required of every session (one user: [`SASL_USER`]).
    Sasl,
}

const SASL_USER: &str = "locker";
/// The connect timeout of the TLS and SASL entries: each must fail within it.
const SECURE_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The server of `mode`, started on first use (blocking: the runner calls
/// [`prepare`] before an entry's clock runs).
fn server(mode: Mode) -> &'static Ensemble {
    static SERVERS: [OnceLock<Ensemble>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let (slot, options) = match mode {
        Mode::Tls => (0, Options { tls: Some(Tls { client_auth: false, self_signed: false }), ..Options::default() }),
        Mode::MutualTls => {
            (1, Options { tls: Some(Tls { client_auth: true, self_signed: false }), ..Options::default() })
        }
        Mode::Sasl => {
            let sasl = Sasl { users: vec![(SASL_USER.into(), "s3cret-pw".into())], required: true };
            (2, Options { sasl: Some(sasl), ..Options::default() })
        }
    };
    SERVERS[slot].get_or_init(|| Ensemble::start(1, options).expect("start a secure ZooKeeper"))
}

/// Starts the server an entry needs, if it needs one (blocking).
pub fn prepare(id: &str) {
    let mode = match id {
        "sasl-unknown-mechanism" => return,
        _ if id.starts_with("sasl-") => Mode::Sasl,
        "tls-no-client-cert" | "tls-untrusted-client-cert" | "tls-key-password-wrong" | "tls-key-password-missing" => {
            Mode::MutualTls
        }
        _ if id.starts_with("tls-") => Mode::Tls,
        _ => return,
    };
    server(mode);
}

fn files(zk: &Ensemble) -> &TlsFiles {
    zk.tls_files().expect("a TLS ensemble")
}

/// The secureClientPorts as `localhost:port`, the name the servers' certificate carries.
fn by_name(zk: &Ensemble) -> SessionOptions {
    SessionOptions::new(zk.secure_connect_string("localhost").unwrap())
}

/// The secureClientPorts as `127.0.0.1:port`, a name the certificate does not carry.
fn by_ip(zk: &Ensemble) -> SessionOptions {
    SessionOptions::new(zk.secure_connect_string("127.0.0.1").unwrap())
}

fn trusting(zk: &Ensemble) -> TlsOptions {
    TlsOptions::new().ca(files(zk).ca.as_path())
}

/// The client certificate with its key encrypted (PKCS#8), no password yet.
fn encrypted_key(zk: &Ensemble) -> TlsOptions {
    let f = files(zk);
    trusting(zk).certfile(f.client_cert.as_path()).keyfile(f.client_key_encrypted.as_path())
}

/// Connects to the `mode` server with `options(server)` and a
/// [`SECURE_CONNECT_TIMEOUT`]; the connect is the check, and must fail within it.
async fn secure(c: Arc<Ctx>, mode: Mode, options: fn(&Ensemble) -> SessionOptions) {
    let options = options(server(mode)).connect_timeout(SECURE_CONNECT_TIMEOUT);
    let started = std::time::Instant::now();
    c.check("connect", c.connect(options).await);
    let elapsed = started.elapsed();
    assert!(elapsed <= SECURE_CONNECT_TIMEOUT + Duration::from_secs(1), "failed only after {elapsed:?}");
}

/// Each recipe, a lease try, a multi-lock and the ACL calls on a bad path.
async fn recipes_on_bad_path(c: Arc<Ctx>, path: &'static str) {
    let s = c.session().await;
    c.check("Barrier", Barrier::new(&s, path).map(drop));
    c.check("DoubleBarrier", DoubleBarrier::new(&s, path, 2, "").map(drop));
    c.check("Party", Party::new(&s, path, "").map(drop));
    c.check("ShallowParty", Party::shallow(&s, path, "").map(drop));
    c.check("Queue", Queue::new(&s, path).map(drop));
    c.check("LockingQueue", LockingQueue::new(&s, path).map(drop));
    c.check("Counter", Counter::new(&s, path, 0).map(drop));
    c.check("lease", try_lease(&s, path, HOUR, "a", SystemTime::now()).await.map(drop));
    c.check("multi-lease", try_multi_lease(&s, 2, path, HOUR, "a", SystemTime::now()).await.map(drop));
    c.check("MultiLock", MultiLock::new(&s, [c.path("a"), path.to_owned()], "").map(drop));
    c.check("get_acls", s.get_acls(path).await.map(drop));
    c.check("set_acls", s.set_acls(path, &[Acl::new(Permission::ALL, AuthId::anyone())], None).await.map(drop));
}

/// Every kind of lock, and a semaphore, on a bad path.
async fn bad_path(c: Arc<Ctx>, path: String) {
    let s = c.session().await;
    for kind in KINDS {
        c.check(&format!("{kind:?} lock"), Lock::new(&s, &path, kind, LockConfig::default()));
    }
    c.check("semaphore", Semaphore::new(&s, &path, "", 1));
}

async fn bad_identifier(c: Arc<Ctx>, identifier: Vec<u8>) {
    let s = c.session().await;
    for kind in KINDS {
        let config = LockConfig { identifier: identifier.clone(), ..LockConfig::default() };
        c.check(&format!("{kind:?} lock"), Lock::new(&s, &c.path("lock"), kind, config));
    }
    c.check("semaphore", Semaphore::new(&s, &c.path("pool"), identifier, 1));
}

async fn bad_connect(c: Arc<Ctx>, connect: &'static str) {
    let options = SessionOptions::new(connect).connect_timeout(Duration::from_secs(2));
    c.check("connect", c.connect(options).await);
}

/// The longest path and the largest identifier, together in one request.
async fn limits_fit(c: Arc<Ctx>) {
    let s = c.session().await;
    let longest = |name: &str| {
        let prefix = c.path(name);
        format!("{prefix}{}", "p".repeat(MAX_PATH_BYTES - prefix.len()))
    };
    let identifier = vec![b'x'; MAX_IDENTIFIER_BYTES];
    let config = LockConfig { identifier: identifier.clone(), ..LockConfig::default() };
    let lock = Lock::new(&s, &longest("lock"), Kind::Mutex, config).unwrap();
    // Megabyte writes, each synced to disk: slow on a loaded machine.
    let slow = Acquire::timeout(Duration::from_secs(20));
    c.check("lock acquire", lock.acquire(slow.clone()).await);
    let semaphore = Semaphore::new(&s, &longest("pool"), identifier, 1).unwrap();
    c.check("semaphore acquire", semaphore.acquire(slow).await);
    assert!(lock.release().await.unwrap() && semaphore.release().await.unwrap());
}

/// A free lock and semaphore acquired with `options`; released if held.
async fn acquire_both(c: Arc<Ctx>, options: Acquire) {
    let s = c.session().await;
    let lock = Lock::mutex(&s, &c.path("lock")).unwrap();
    let semaphore = Semaphore::new(&s, &c.path("pool"), "", 1).unwrap();
    c.check("lock acquire", lock.acquire(options.clone()).await);
    c.check("semaphore acquire", semaphore.acquire(options).await);
    lock.release().await.unwrap();
    semaphore.release().await.unwrap();
}

/// A held lock and a held semaphore lease, on one new session.
async fn held(c: &Ctx) -> (Lock, Semaphore) {
    let s = c.session().await;
    let lock = Lock::mutex(&s, &c.path("lock")).unwrap();
    let semaphore = Semaphore::new(&s, &c.path("pool"), "", 1).unwrap();
    assert!(lock.acquire(Acquire::timeout(PATIENCE)).await.unwrap());
    assert!(semaphore.acquire(Acquire::timeout(PATIENCE)).await.unwrap());
    (lock, semaphore)
}

/// The owner of [`reentrant_held`]'s hold, and another.
const OWNER: Owner = Owner(1);
const OTHER: Owner = Owner(2);

/// A reentrant lock that [`OWNER`] holds twice.
async fn reentrant_held(c: &Ctx) -> Lock {
    let config = LockConfig { reentrant: true, ..LockConfig::default() };
    let lock = Lock::new(&c.session().await, &c.path("lock"), Kind::Mutex, config).unwrap();
    for _ in 0..2 {
        assert!(lock.acquire(Acquire::timeout(PATIENCE).owner(OWNER)).await.unwrap());
    }
    lock
}

/// The hold was untouched: it takes the owner's two releases.
async fn reentrant_let_go(lock: Lock) {
    assert!(lock.release_by(OWNER).await.unwrap() && lock.is_acquired());
    assert!(lock.release_by(OWNER).await.unwrap() && !lock.release_by(OWNER).await.unwrap());
}

async fn again_while_held(c: Arc<Ctx>, again: Acquire) {
    let (lock, semaphore) = held(&c).await;
    c.check("lock acquire again", lock.acquire(again).await);
    assert!(lock.release().await.unwrap() && semaphore.release().await.unwrap());
}
