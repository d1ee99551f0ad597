use zoolock::{PersistentNode, Session, SessionOptions};

#[tokio::main]
async fn main() -> zoolock::Result<()> {
    let connect = std::env::var("ZOOKEEPER").unwrap_or_else(|_| "127.0.0.1:2181".into());
    let session = Session::connect(SessionOptions::new(connect)).await?;
    let node = PersistentNode::new(&session, "/services/api/worker-2", b"10.0.0.2:8080".to_vec())?;
    node.start().await?; // kept across expiries and deletions until close
    println!("registered: {:?}", session.children("/services/api").await?);
    node.close().await?;
    Ok(())
}
