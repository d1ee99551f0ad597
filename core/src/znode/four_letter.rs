//! ZooKeeper's four-letter words (`ruok`, `envi`, `stat`, `mntr`, …) and
//! the server's version read from `envi` (kazoo's `command` and
//! `server_version`). They go over a connection of their own, as kazoo's
//! do: the server answers and closes it. The server must allow the word
//! (`4lw.commands.whitelist`; `ruok` and `srvr` by default, else it answers
//! "… is not executed because it is not in the whitelist.").

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

use crate::error::{Error, Result};
use crate::options::ConnectString;
use crate::runtime;
use crate::session::Session;
use crate::state::SessionState;

/// More than any four-letter word answers (`envi` and `mntr` are a few KB).
const MAX_ANSWER: u64 = 1 << 20;

impl Session {
    /// Sends a four-letter word and returns the server's answer as text
    /// (`"imok"` for `ruok`). [`Error::ConnectionLoss`] while the session is
    /// not connected, as kazoo. The word goes to the server the session is
    /// on ([`Session::server`]), as kazoo's does.
    pub async fn command(&self, word: &str) -> Result<String> {
        if word.len() != 4 || !word.bytes().all(|b| b.is_ascii_lowercase()) {
            return Err(Error::InvalidArgument(format!(
                "a four-letter word is four lowercase ASCII letters (ruok, envi, stat, mntr, …), got {word:?}"
            )));
        }
        self.check_usable()?;
        if self.state() != SessionState::Connected {
            return Err(Error::ConnectionLoss(Duration::ZERO));
        }
        if self.options().tls_on().is_some() {
            return Err(Error::InvalidArgument(
                "four-letter words over TLS are not supported: zoolock sends them on a plain connection".into(),
            ));
        }
        let bound = self.request_bound();
        let endpoints = self
            .server()
            .map_or_else(|| Ok(ConnectString::parse(&self.hosts())?.endpoints()), |s| Ok::<_, Error>(vec![s]))?;
        let ask = async {
            let mut last = None;
            for (host, port) in &endpoints {
                match TcpStream::connect((host.as_str(), *port)).await {
                    Ok(mut stream) => {
                        stream.write_all(word.as_bytes()).await?;
                        let mut answer = Vec::new();
                        (&mut stream).take(MAX_ANSWER).read_to_end(&mut answer).await?;
                        return Ok(String::from_utf8_lossy(&answer).into_owned());
                    }
                    Err(err) => last = Some(err),
                }
            }
            Err(last.unwrap_or_else(|| std::io::Error::other("no server in the connect string")))
        };
        let failed = |reason: String| Error::ZooKeeper {
            action: "send a four-letter word to",
            path: self.options().connect.clone(),
            message: reason,
        };
        match timeout(bound, ask).await {
            Err(_) => Err(Error::ConnectionLoss(bound)),
            Ok(Err(err)) => Err(failed(err.to_string())),
            Ok(Ok(answer)) => Ok(answer),
        }
    }

    /// The server's version, `[3, 8, 0]`, from its `envi` answer
    /// (`zookeeper.version=3.8.0-…`), as kazoo's `server_version`.
    pub async fn server_version(&self) -> Result<Vec<u32>> {
        let envi = self.command("envi").await?;
        parse_version(&envi).ok_or_else(|| Error::ZooKeeper {
            action: "read the version of",
            path: self.options().connect.clone(),
            message: format!("no zookeeper.version in the envi answer: {:?}", envi.lines().next().unwrap_or("")),
        })
    }

    /// [`Session::command`] for callers without an async runtime.
    pub fn command_blocking(&self, word: &str) -> Result<String> {
        runtime::block_on(self.command(word))
    }

    /// [`Session::server_version`] for callers without an async runtime.
    pub fn server_version_blocking(&self) -> Result<Vec<u32>> {
        runtime::block_on(self.server_version())
    }
}

/// The server's version in an `envi` answer: the dotted digits of
/// `zookeeper.version=3.8.0-…, built on …`, at least major and minor (kazoo
/// asks again after a cut-off answer; `None` then).
pub fn parse_version(envi: &str) -> Option<Vec<u32>> {
    let value = envi.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.trim() == "zookeeper.version").then(|| value.trim())
    })?;
    let digits: String = value.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    let version: Vec<u32> = digits.split('.').map(str::parse).collect::<std::result::Result<_, _>>().ok()?;
    (version.len() >= 2).then_some(version)
}

#[cfg(test)]
mod tests {
    use super::parse_version;

    #[test]
    fn the_version_is_read_from_envi() {
        let envi = "Environment:\nzookeeper.version=3.8.0-5a02a05eddb59aee6ac762f7ea82e92a68eb9c0f, built on 2022-02-25 08:49 UTC\nhost.name=x\n";
        assert_eq!(parse_version(envi), Some(vec![3, 8, 0]));
        assert_eq!(parse_version("zookeeper.version=3.9.2\n"), Some(vec![3, 9, 2]));
        assert_eq!(parse_version("zookeeper.version=3\n"), None);
        assert_eq!(parse_version("envi is not executed because it is not in the whitelist.\n"), None);
    }
}
