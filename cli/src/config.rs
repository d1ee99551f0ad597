//! The config file for the connection and credentials (as zkCli's
//! `-client-configuration` and etcdctl's environment give them):
//! `key = value` lines, `#` comments, the keys being the long flags' names.
//! Flags and the environment come first; the file fills in the rest.
//!
//! ```text
//! connect = zk1:2181,zk2:2181/app
//! session-timeout = 10s
//! tls = true
//! ca = /etc/zookeeper/ca.pem
//! auth-file = /etc/zoolock/auth      # or `auth = digest:user:pw`, then chmod 600 this file
//! ```

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::credentials;

/// The environment variable naming the config file.
pub const CONFIG_VAR: &str = "ZOOLOCK_CONFIG";

/// The keys a config file may set: the flag, and the environment variable
/// that, when set, comes before the file.
const KEYS: [(&str, Option<&str>); 15] = [
    ("connect", Some("ZOOLOCK_CONNECT")),
    ("session-timeout", None),
    ("connect-timeout", None),
    ("auth", None),
    ("auth-file", None),
    ("tls", None),
    ("ca", None),
    ("certfile", None),
    ("keyfile", None),
    ("keyfile-password-file", None),
    ("no-check-hostname", None),
    ("sasl-username", None),
    ("sasl-password-file", None),
    ("sasl-mechanism", None),
    ("acl", None),
];

/// Switches: `true` gives the flag, `false` leaves it out.
const SWITCHES: [&str; 2] = ["tls", "no-check-hostname"];

/// The config file to read: the one asked for, else the first that exists
/// of `$XDG_CONFIG_HOME/zoolock/zoolock.conf` (`~/.config/…`) and
/// `/etc/zoolock/zoolock.conf`.
pub fn find(asked: Option<&Path>) -> Option<PathBuf> {
    if let Some(asked) = asked {
        return Some(asked.to_owned());
    }
    let home = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")));
    let user = home.map(|dir| dir.join("zoolock/zoolock.conf"));
    user.into_iter().chain([PathBuf::from("/etc/zoolock/zoolock.conf")]).find(|path| path.is_file())
}

/// The file's settings as flags, to go before the command line's own
/// (which override them: the parser lets a later flag replace an earlier).
pub fn flags(path: &Path) -> Result<Vec<OsString>, String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read the config file {shown}: {e}"))?;
    let mut out = Vec::new();
    let mut secret = false;
    for (n, line) in text.lines().enumerate() {
        let line = line.split_once(" #").map_or(line, |(setting, _)| setting).trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |why: String| format!("{shown}, line {}: {why}", n + 1);
        let (key, value) = line.split_once('=').ok_or_else(|| bad("expected `key = value`".into()))?;
        let (key, value) = (key.trim(), value.trim());
        let Some((_, env)) = KEYS.iter().find(|(name, _)| *name == key) else {
            let known: Vec<&str> = KEYS.iter().map(|(name, _)| *name).collect();
            return Err(bad(format!("unknown key {key:?} (keys: {})", known.join(", "))));
        };
        secret |= key == "auth";
        if env.is_some_and(|var| std::env::var_os(var).is_some()) {
            continue;
        }
        if SWITCHES.contains(&key) {
            match value {
                "true" => out.push(format!("--{key}").into()),
                "false" => {}
                _ => return Err(bad(format!("{key} is true or false"))),
            }
        } else {
            out.push(format!("--{key}").into());
            out.push(value.into());
        }
    }
    if secret {
        credentials::read_secret(path, "the config file (it holds `auth`)")?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_become_flags() {
        let dir = std::env::temp_dir().join(format!("zoolock-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("zoolock.conf");
        let text = "# ops\n\nsession-timeout = 5s   # short\ntls = true\nno-check-hostname = false\nca = /etc/ca.pem\n";
        std::fs::write(&file, text).unwrap();
        let given: Vec<String> = flags(&file).unwrap().into_iter().map(|f| f.into_string().unwrap()).collect();
        assert_eq!(given, ["--session-timeout", "5s", "--tls", "--ca", "/etc/ca.pem"]);
        for bad in ["conect = x", "tls = yes", "connect"] {
            std::fs::write(&file, bad).unwrap();
            assert!(flags(&file).is_err(), "{bad}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
