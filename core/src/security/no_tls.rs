//! Without the `tls` feature: a session asked for TLS fails before any
//! network call with [`Error::Tls`] saying so; plaintext connects have no
//! probe (the probe speaks TLS to name a mismatch).

use std::time::Duration;

use super::TlsOptions;
use crate::error::{Error, Result};

/// Never made: [`TlsOptions::prepare`] always refuses.
pub(crate) enum PreparedTls {}

impl TlsOptions {
    pub(crate) fn prepare(&self) -> Result<PreparedTls> {
        Err(Error::Tls { reason: "zoolock was built without its `tls` feature".to_owned() })
    }
}

/// Any host: without TLS, certificates are not checked against names.
pub(crate) fn check_tls_hosts(_connect: &str, _hosts: &[(String, u16)]) -> Result<()> {
    Ok(())
}

/// Finds nothing: there is no TLS to probe with.
pub(crate) struct Probe;

impl Probe {
    pub fn new(_hosts: Vec<(String, u16)>, _tls: Option<std::convert::Infallible>) -> Probe {
        Probe
    }

    pub fn finding(&self) -> Option<String> {
        None
    }

    pub async fn every_host_refuses(&self, _within: Duration) -> String {
        std::future::pending().await
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use crate::{Error, SaslOptions, Session, SessionOptions, TlsOptions};

    /// Nothing listens on port 1: an answer within the connect timeout's
    /// fraction is the refusal before any network call.
    fn connect(options: SessionOptions) -> Error {
        let started = Instant::now();
        let err = Session::connect_blocking(options.connect_timeout(Duration::from_secs(5))).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(2), "waited {:?}", started.elapsed());
        err
    }

    #[test]
    fn a_tls_session_is_refused_by_name_without_the_feature() {
        let err = connect(SessionOptions::new("127.0.0.1:1").tls(TlsOptions::new()));
        assert!(matches!(&err, Error::Tls { reason } if reason.contains("`tls` feature")), "{err:?}");
    }

    #[test]
    fn a_sasl_session_is_refused_by_name_without_the_feature() {
        let err = connect(SessionOptions::new("127.0.0.1:1").sasl(SaslOptions::digest_md5("u", "p")));
        assert!(matches!(&err, Error::InvalidArgument(reason) if reason.contains("`sasl` feature")), "{err:?}");
    }
}
