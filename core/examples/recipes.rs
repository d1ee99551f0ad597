use zoolock::{Barrier, LockingQueue, Party, Queue, Session, SessionOptions};

#[tokio::main]
async fn main() -> zoolock::Result<()> {
    let connect = std::env::var("ZOOKEEPER").unwrap_or_else(|_| "127.0.0.1:2181".into());
    let session = Session::connect(SessionOptions::new(connect)).await?;

    // kazoo's Queue: entry-<priority>-<sequence>, lowest priority first, removed as taken.
    let queue = Queue::new(&session, "/app/queue")?;
    queue.put(b"routine", Queue::DEFAULT_PRIORITY).await?;
    queue.put(b"urgent", 1).await?;
    assert_eq!(queue.get().await?.as_deref(), Some(&b"urgent"[..]));

    // kazoo's LockingQueue: get locks an entry; consume removes it, release gives it back.
    let jobs = LockingQueue::new(&session, "/app/jobs")?;
    jobs.put_all(&[b"a".to_vec(), b"b".to_vec()], 100).await?;
    let job = jobs.get(Some(std::time::Duration::from_secs(5))).await?; // None on timeout
    println!("working on {:?}", job.map(String::from_utf8));
    jobs.consume().await?; // false if this consumer lost its lock (its session ended)

    // kazoo's Barrier and ShallowParty.
    let barrier = Barrier::new(&session, "/app/barrier")?;
    barrier.create().await?;
    barrier.remove().await?;
    assert!(barrier.wait(None).await?, "down: wait returns at once");
    let member = Party::shallow(&session, "/app/workers", "worker-1")?;
    member.join().await?; // joins again on a new session until it leaves
    println!("workers: {:?}", member.members().await?);
    member.leave().await?;
    Ok(())
}
