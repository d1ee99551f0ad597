use std::time::Duration;
use zoolock::{Acquire, Lock, Session, SessionOptions};

#[tokio::main]
async fn main() -> zoolock::Result<()> {
    // A local ZooKeeper, or ZOOKEEPER="zk1:2181,zk2:2181/app".
    let connect = std::env::var("ZOOKEEPER").unwrap_or_else(|_| "127.0.0.1:2181".into());
    let session = Session::connect(SessionOptions::new(connect)).await?;
    let lock = Lock::mutex_with_identifier(&session, "/locks/ledger", "worker-1")?;
    if let Some(hold) = lock.hold(Acquire::timeout(Duration::from_secs(5))).await? {
        let token = hold.fencing_token(); // pass it to the guarded resource
        println!("{} holds with token {token}", hold.node());
        // … critical section; stop writing when hold.state() leaves Held …
        hold.release().await?; // or drop it: released in the background
    }
    session.close().await;
    Ok(())
}
