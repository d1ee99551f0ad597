// zoolock's own Acl, AuthId and Permission: those of the `zookeeper-client`
// crate are other types to cargo, which zoolock's calls refuse (E0308).
use zoolock::{Acl, AuthId, Create, Permission, Session, SessionOptions};

#[tokio::main]
async fn main() -> zoolock::Result<()> {
    let connect = std::env::var("ZOOKEEPER").unwrap_or_else(|_| "127.0.0.1:2181".into());
    // Every node zoolock creates (lock nodes, their parents): only the identities the session authenticated as.
    let creator_only = vec![Acl::new(Permission::ALL, AuthId::authed())];
    let options = SessionOptions::new(connect).digest_auth("ops", "secret").acls(creator_only);
    let session = Session::connect(options).await?;

    // One node's own ACL: its creator may do anything, anyone may read.
    let readable = vec![Acl::new(Permission::ALL, AuthId::authed()), Acl::new(Permission::READ, AuthId::anyone())];
    session.create("/app/config", Some(b"v1"), &Create::default().acls(readable).makepath()).await?;
    let (acls, stat) = session.get_acls("/app/config").await?;
    for acl in &acls {
        println!("{}:{} {}", acl.scheme(), acl.id(), acl.permission()); // digest:ops:… ALL, world:anyone READ
    }
    // Creator only again, if nobody changed the ACL meanwhile (Error::BadVersion otherwise).
    session.set_acls("/app/config", &session.options().acls, Some(stat.aversion)).await?;
    session.close().await;
    Ok(())
}
