use zoolock::{Create, DataWatch, Election, Retry, Session, SessionOptions};

#[tokio::main]
async fn main() -> zoolock::Result<()> {
    let connect = std::env::var("ZOOKEEPER").unwrap_or_else(|_| "127.0.0.1:2181".into());
    let session = Session::connect(SessionOptions::new(connect)).await?;

    session.ensure_path("/app/config", None).await?;
    let (job, _stat) = session.create("/app/jobs/job-", Some(b"{}"), &Create::default().sequence().makepath()).await?;
    let (_data, stat) = session.get("/app/config").await?;
    session.set("/app/config", Some(b"v2"), Some(stat.version)).await?; // Error::BadVersion if it changed
    println!("made {job}; jobs: {:?}", session.children("/app/jobs").await?);
    session.delete("/app/jobs", None, true).await?; // recursive, as kazoo's
    let all_or_nothing =
        session.transaction().check("/app/config", Some(1)).create("/app/flag", Some(b""), Create::default());
    all_or_nothing.commit().await?;
    let (data, _) = session.retry(Retry::default(), || session.get("/app/config")).await?; // kazoo's retry
    println!("config: {}", String::from_utf8_lossy(data.as_deref().unwrap_or_default()));

    // kazoo's DataWatch: called at once (in this task, before start returns), then
    // on each change (None while absent) on the session's watch thread, until it
    // returns false or the handle is dropped. start_from(…, seen_mzxid, …) calls
    // only at a change from a state seen before.
    let watch = DataWatch::start(&session, "/app/config", |value, _event| {
        println!("config is now {:?}", value.map(|(data, _stat)| data));
        true
    })
    .await?;

    // kazoo's Election, Curator's LeaderLatch: a kazoo Lock on the path.
    let election = Election::new(&session, "/app/leader", "worker-1")?;
    let term = election.lead().await?; // waits until leading
    println!("leading with token {}", term.fencing_token()); // grows from term to term
    let state = term.subscribe(); // Held → Suspended → Lost(..)
    println!("term: {:?}", *state.borrow());
    // A write that commits only while this term (or a lock hold) lasts:
    term.fenced()?.set("/app/config", Some(b"v3"), None).commit().await?; // Error::NotHeld once deposed
    term.resign().await?;
    drop(watch);
    session.close().await;
    Ok(())
}
