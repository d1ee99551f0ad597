//! ZooKeeper's four-letter words (`mntr`, `ruok`, ...), sent straight to a server.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// Sends `word` to the server at `addr` and reads its whole answer.
pub(crate) fn four_letter(addr: SocketAddr, word: &str) -> io::Result<String> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(1))?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    s.set_write_timeout(Some(Duration::from_secs(5)))?;
    s.write_all(word.as_bytes())?;
    let mut out = String::new();
    s.read_to_string(&mut out)?;
    Ok(out)
}

/// Parses `mntr`'s `key<TAB>value` lines. A server that is not serving
/// requests answers a sentence instead, which yields an empty map.
pub(crate) fn parse_mntr(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|line| line.split_once('\t'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses_mntr() {
        let m = super::parse_mntr("zk_version\t3.8.0\nzk_server_state\tleader\nzk_packets_received\t12\n");
        assert_eq!(m["zk_server_state"], "leader");
        assert_eq!(m["zk_packets_received"], "12");
        assert!(super::parse_mntr("This ZooKeeper instance is not currently serving requests\n").is_empty());
    }
}
