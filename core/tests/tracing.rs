//! The `tracing` spans around zoolock's work, as a subscriber sees them: an
//! acquisition's events in an `acquire` span with the lock path, a release's
//! in a `release` span; background work on behalf of a call (the release of
//! a dropped hold) in the caller's span; the work of a hold that outlives
//! its acquire (a lease's timer) in a `hold` span of its own, not the
//! caller's. A recording subscriber of the test's own (no tracing-subscriber
//! in the dependencies); one test, as it is the process's global one. It
//! cannot say which span is current (`tracing::span::Current` is
//! tracing-core's, not re-exported): what it sees in a span is in a span
//! made where the call was, not only `Span::current()` carried along.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use tokio::time::timeout;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Instrument, Metadata, Subscriber};
use zoolock::{Acquire, Lock, LockState, LostReason};

/// A span as recorded: its name, fields and parent.
struct SpanData {
    name: &'static str,
    fields: BTreeMap<String, String>,
    parent: Option<u64>,
}

/// An event as recorded: its fields (`message` among them) and the spans
/// it was in, innermost first, each as its name and fields.
#[derive(Debug, Clone)]
struct Logged {
    fields: BTreeMap<String, String>,
    spans: Vec<(&'static str, BTreeMap<String, String>)>,
}

impl Logged {
    fn message(&self) -> &str {
        self.fields.get("message").map_or("", String::as_str)
    }

    /// The innermost span named `name` the event was in, if any.
    fn span(&self, name: &str) -> Option<&BTreeMap<String, String>> {
        self.spans.iter().find(|(n, _)| *n == name).map(|(_, fields)| fields)
    }

    fn in_span(&self, name: &str) -> bool {
        self.span(name).is_some()
    }
}

#[derive(Default)]
struct Recorder {
    next: AtomicU64,
    spans: Mutex<HashMap<u64, SpanData>>,
    events: Mutex<Vec<Logged>>,
}

thread_local! {
    /// The spans entered on this thread, innermost last.
    static ENTERED: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl Recorder {
    fn current(&self) -> Option<u64> {
        ENTERED.with(|entered| entered.borrow().last().copied())
    }

    /// The spans from `id` outwards, each as its name and fields.
    fn chain(&self, mut id: Option<u64>) -> Vec<(&'static str, BTreeMap<String, String>)> {
        let spans = self.spans.lock().unwrap();
        let mut chain = Vec::new();
        while let Some(span) = id.and_then(|id| spans.get(&id)) {
            chain.push((span.name, span.fields.clone()));
            id = span.parent;
        }
        chain
    }

    fn events(&self) -> Vec<Logged> {
        self.events.lock().unwrap().clone()
    }
}

/// The test's subscriber: shares the recorder it installs.
struct Shared(Arc<Recorder>);

impl Subscriber for Shared {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, attributes: &Attributes<'_>) -> Id {
        let id = self.0.next.fetch_add(1, Ordering::Relaxed) + 1;
        let mut fields = BTreeMap::new();
        attributes.record(&mut Fields(&mut fields));
        let parent = if attributes.is_contextual() { self.0.current() } else { attributes.parent().map(Id::into_u64) };
        let span = SpanData { name: attributes.metadata().name(), fields, parent };
        self.0.spans.lock().unwrap().insert(id, span);
        Id::from_u64(id)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        if let Some(span) = self.0.spans.lock().unwrap().get_mut(&span.into_u64()) {
            values.record(&mut Fields(&mut span.fields));
        }
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        let parent = if event.is_contextual() { self.0.current() } else { event.parent().map(Id::into_u64) };
        let spans = self.0.chain(parent);
        self.0.events.lock().unwrap().push(Logged { fields, spans });
    }

    fn enter(&self, span: &Id) {
        ENTERED.with(|entered| entered.borrow_mut().push(span.into_u64()));
    }

    fn exit(&self, span: &Id) {
        ENTERED.with(|entered| {
            let mut entered = entered.borrow_mut();
            if let Some(at) = entered.iter().rposition(|id| *id == span.into_u64()) {
                entered.remove(at);
            }
        });
    }
}

/// The first recorded event whose message is `message` and whose `path` field is `path`.
fn find(recorder: &Recorder, message: &str, path: &str) -> Option<Logged> {
    recorder
        .events()
        .into_iter()
        .find(|e| e.message() == message && e.fields.get("path").map(String::as_str) == Some(path))
}

async fn until_logged(recorder: &Recorder, message: &str, path: &str) -> Logged {
    timeout(Duration::from_secs(10), async {
        loop {
            if let Some(event) = find(recorder, message, path) {
                return event;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no {message:?} for {path} in {:#?}", recorder.events()))
}

async fn until_state(lock: &Lock, wanted: LockState) {
    let mut states = lock.subscribe();
    timeout(Duration::from_secs(10), states.wait_for(|s| *s == wanted)).await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn spans_follow_a_call_into_the_background_and_not_past_it() {
    let recorder = Arc::new(Recorder::default());
    tracing::subscriber::set_global_default(Shared(recorder.clone())).expect("the first subscriber of this process");
    let connect = shared_server();

    // The connect is the caller's: its event is in the caller's span.
    let startup = tracing::info_span!("startup");
    let session = session(&connect).instrument(startup).await;
    let connected = recorder.events().into_iter().find(|e| e.message() == "zoolock session").expect("a connect event");
    assert!(connected.in_span("startup"), "{connected:?}");

    // An acquisition's events are in an `acquire` span with the path and
    // the kind; a release's in a `release` span with the path.
    let path = unique_path("tracing-acquire");
    let lock = Lock::mutex(&session, &path).unwrap();
    assert!(lock.acquire(Acquire::default()).await.unwrap());
    let holds = find(&recorder, "zoolock holds", &path).expect("a hold event");
    let acquire = holds.span("acquire").unwrap_or_else(|| panic!("not in an acquire span: {holds:?}"));
    assert_eq!(acquire.get("path"), Some(&path), "{holds:?}");
    assert_eq!(acquire.get("kind").map(String::as_str), Some("mutex"), "{holds:?}");
    assert!(lock.release().await.unwrap());
    let released = find(&recorder, "zoolock released", &path).expect("a release event");
    assert_eq!(released.span("release").and_then(|s| s.get("path")), Some(&path), "{released:?}");

    // A hold dropped in the caller's `request` span is released in the
    // background, on the session's runtime, in that span.
    let path = unique_path("tracing-drop");
    let lock = Lock::mutex(&session, &path).unwrap();
    let request = tracing::info_span!("request", id = 7);
    let hold = lock.hold(Acquire::default()).instrument(request.clone()).await.unwrap().expect("held");
    request.in_scope(|| drop(hold));
    until_state(&lock, LockState::Released).await;
    let released = until_logged(&recorder, "zoolock released", &path).await;
    assert!(released.in_span("release"), "{released:?}");
    assert_eq!(released.span("request").and_then(|s| s.get("id")).map(String::as_str), Some("7"), "{released:?}");

    // A hold's own work outlives the call that acquired it: a lease runs
    // out in the hold's span, not the caller's nor the acquire's.
    let path = unique_path("tracing-lease");
    let lock = Lock::mutex(&session, &path).unwrap();
    let request = tracing::info_span!("request", id = 8);
    let leased = lock.acquire(Acquire::default().lease(Duration::from_millis(100))).instrument(request).await;
    assert!(leased.unwrap());
    until_state(&lock, LockState::Lost(LostReason::LeaseExpired)).await;
    let lost = until_logged(&recorder, "zoolock hold lost", &path).await;
    assert_eq!(lost.span("hold").and_then(|s| s.get("path")), Some(&path), "{lost:?}");
    assert!(!lost.in_span("request") && !lost.in_span("acquire"), "{lost:?}");

    session.close().await;
}
