//! `logging::events_to_log`, the bindings' log: the core's events reach the
//! `log` logger as tracing's "log" feature writes them, its spans never.
//! A test binary of its own: the subscriber is the process's.

mod common;

use std::sync::Mutex;

use common::*;
use zoolock::{Acquire, Lock};

static HEARD: Mutex<Vec<(log::Level, String, String)>> = Mutex::new(Vec::new());

struct Catch;

impl log::Log for Catch {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.target().starts_with("zoolock")
    }

    fn log(&self, record: &log::Record<'_>) {
        if self.enabled(record.metadata()) {
            HEARD.lock().unwrap().push((record.level(), record.target().to_owned(), record.args().to_string()));
        }
    }

    fn flush(&self) {}
}

#[tokio::test(flavor = "multi_thread")]
async fn events_reach_the_log_as_tracing_writes_them_and_spans_do_not() {
    log::set_logger(&Catch).unwrap();
    log::set_max_level(log::LevelFilter::Trace);
    assert!(zoolock::logging::events_to_log());
    assert!(!zoolock::logging::events_to_log(), "set once per process");

    let connect = shared_server();
    let session = session(&connect).await;
    let lock = Lock::mutex(&session, &unique_path("logging")).unwrap();
    for _ in 0..3 {
        assert!(lock.acquire(Acquire::default()).await.unwrap());
        lock.release().await.unwrap();
    }
    // A waiter's event, decided by the mirror (two sessions on a path: the default mirrors).
    let other = common::session(&connect).await;
    let path = unique_path("logging-waits");
    let holder = Lock::mutex(&session, &path).unwrap();
    let waiter = Lock::mutex(&other, &path).unwrap();
    // The waiter's mirror synced first: a first decision waits for the sync,
    // which could come after the release.
    assert!(waiter.acquire(Acquire::default()).await.unwrap());
    waiter.release().await.unwrap();
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    let waiting = spawn_acquire(&waiter, Acquire::default());
    queued(&raw(&connect).await, &path, 2).await;
    holder.release().await.unwrap();
    assert!(waiting.await.unwrap().unwrap());
    other.close().await;
    session.close().await;

    let heard = HEARD.lock().unwrap().clone();
    let id = format!("{:#x}", session.status().session_id);
    let connected =
        format!(r#"zoolock session state=Connected generation=1 session_id="{id}" resumed=false hosts="{connect}""#);
    assert!(
        heard.iter().any(|(level, target, text)| *level == log::Level::Info
            && target == "zoolock::session::connection"
            && *text == connected),
        "{connected} not in {heard:#?}"
    );
    assert!(heard.iter().any(|(level, _, text)| *level == log::Level::Debug && text.starts_with("zoolock holds")));
    let waits = |(level, target, text): &(log::Level, String, String)| {
        *level == log::Level::Debug
            && target == "zoolock::mirror"
            && text.starts_with("zoolock waits")
            && text.contains(&format!("path={path:?}"))
            && text.contains("predecessor=")
            && text.ends_with("ahead=1")
    };
    assert!(heard.iter().any(waits), "no mirrored waiter's event in {heard:#?}");
    let spans: Vec<_> = heard
        .iter()
        .filter(|(_, _, text)| ["acquire;", "hold;", "release;", "session;", "span="].iter().any(|s| text.contains(s)))
        .collect();
    assert!(spans.is_empty(), "{spans:#?}");
}
