use zoolock::{SaslOptions, Session, SessionOptions, TlsOptions};

#[tokio::main]
async fn main() -> zoolock::Result<()> {
    // The servers' secureClientPorts, e.g. ZOOKEEPER_TLS="zk1:2281,zk2:2281".
    let connect = std::env::var("ZOOKEEPER_TLS").unwrap_or_else(|_| "localhost:2281".into());
    let secret = |name: &str| std::env::var(name).unwrap_or_default();
    let tls = TlsOptions::new() // kazoo's use_ssl=True
        .ca("ca.pem") // ca: PEM bundle; none = the system's
        .certfile("client.pem") // certfile, keyfile: for ssl.clientAuth=need
        .keyfile("client.key")
        .keyfile_password(secret("ZOOLOCK_KEYFILE_PASSWORD")) // keyfile_password: encrypted PKCS#8 keys
        .check_hostname(true); // check_hostname (on by default; kazoo's is off)
    let options =
        SessionOptions::new(connect).tls(tls).sasl(SaslOptions::digest_md5("locker", secret("ZOOLOCK_SASL_PASSWORD"))); // sasl_options
    let session = Session::connect(options).await?;
    println!("session {:#x}: TLS, SASL user locker", session.status().session_id);
    session.close().await;
    Ok(())
}
