use std::time::Duration;

use zoolock::{LeaderLatch, Session, SessionOptions};

#[tokio::main]
async fn main() -> zoolock::Result<()> {
    let connect = std::env::var("ZOOKEEPER").unwrap_or_else(|_| "127.0.0.1:2181".into());
    let session = Session::connect(SessionOptions::new(connect)).await?;
    let latch = LeaderLatch::new(&session, "/elections/reports", "worker-2")?;
    latch.start()?; // campaigns until close, again after a lost term
    if latch.wait(Some(Duration::from_secs(10))).await? {
        println!("leading, term {:?}", latch.fencing_token());
    }
    latch.close().await; // its node deleted: the next candidate leads
    Ok(())
}
