//! Credentials and TLS for the session, from flags, the environment and
//! files — never only from the command line, which every user of the
//! machine can read in /proc. A file holding a secret must be readable by
//! its owner alone (as ssh demands of its keys). The options themselves are
//! the core's (`SessionOptions`, `TlsOptions`, `SaslOptions`), named after
//! kazoo's as the Python binding's are, and the core checks them.

use std::path::{Path, PathBuf};

use clap::Args;
use zoolock::{Acl, AuthId, Pem, SaslMechanism, SaslOptions, Secret, SessionOptions, TlsOptions};

/// The environment variable with digest (or other) credentials: one
/// `SCHEME:CREDENTIAL` per line.
pub const AUTH_VAR: &str = "ZOOLOCK_AUTH";
pub const SASL_PASSWORD_VAR: &str = "ZOOLOCK_SASL_PASSWORD";
pub const KEYFILE_PASSWORD_VAR: &str = "ZOOLOCK_KEYFILE_PASSWORD";

#[derive(Args, Debug, Default, Clone)]
#[command(next_help_heading = "Credentials, TLS and SASL")]
pub struct Credentials {
    /// Credentials to add to the session, e.g. digest:user:password (repeatable).
    /// Visible to every user in the process list: prefer ZOOLOCK_AUTH or --auth-file
    #[arg(long, value_name = "SCHEME:CREDENTIAL", value_parser = auth, global = true)]
    pub auth: Vec<(String, Vec<u8>)>,
    /// Whether --auth was on the command line itself (a config file's `auth`
    /// is not in the process list).
    #[arg(skip)]
    pub auth_on_command_line: bool,
    /// A file of credentials, one SCHEME:CREDENTIAL per line ('#' comments);
    /// refused unless only its owner can read it
    #[arg(long, value_name = "FILE", global = true)]
    pub auth_file: Option<PathBuf>,
    /// Connect over TLS (the servers' secureClientPort); implied by the other TLS flags
    #[arg(long, global = true)]
    pub tls: bool,
    /// CA certificates (PEM) the servers' certificate must chain to [default: the system's]
    #[arg(long, value_name = "FILE", global = true)]
    pub ca: Option<PathBuf>,
    /// This client's certificate chain (PEM), for servers with ssl.clientAuth=need
    #[arg(long, value_name = "FILE", global = true)]
    pub certfile: Option<PathBuf>,
    /// The private key of --certfile (PEM); refused unless only its owner can read it
    #[arg(long, value_name = "FILE", global = true)]
    pub keyfile: Option<PathBuf>,
    /// A file holding the password of an encrypted --keyfile [or ZOOLOCK_KEYFILE_PASSWORD]
    #[arg(long, value_name = "FILE", global = true)]
    pub keyfile_password_file: Option<PathBuf>,
    /// Accept a server certificate that does not name the host connected to
    #[arg(long, global = true)]
    pub no_check_hostname: bool,
    /// Authenticate with SASL as this user (the server's JAAS users)
    #[arg(long, value_name = "USER", global = true)]
    pub sasl_username: Option<String>,
    /// A file holding the SASL password [or ZOOLOCK_SASL_PASSWORD]
    #[arg(long, value_name = "FILE", global = true)]
    pub sasl_password_file: Option<PathBuf>,
    /// The SASL mechanism
    #[arg(long, value_name = "NAME", default_value = "DIGEST-MD5", global = true)]
    pub sasl_mechanism: String,
    /// The ACL of the lock's nodes, as zkCli writes it: SCHEME:ID:PERMS
    /// (repeatable; PERMS of cdrwa), e.g. auth::cdrwa for the identities
    /// this session authenticated as [default: world:anyone:cdrwa]
    #[arg(long, value_name = "ACL", value_parser = acl, global = true)]
    pub acl: Vec<Acl>,
}

/// `scheme:id:perms`, zkCli's form: the id may hold colons (digest's
/// `user:hash`); the permissions are letters of `cdrwa`.
pub fn acl(text: &str) -> Result<Acl, String> {
    let bad = || format!("{text:?} is not SCHEME:ID:PERMS (e.g. auth::cdrwa, world:anyone:r)");
    let (scheme, rest) = text.split_once(':').ok_or_else(bad)?;
    let (id, perms) = rest.rsplit_once(':').ok_or_else(bad)?;
    if scheme.is_empty() || perms.is_empty() {
        return Err(bad());
    }
    let mut bits = 0;
    for letter in perms.chars() {
        bits |= match letter {
            'r' => 1,
            'w' => 2,
            'c' => 4,
            'd' => 8,
            'a' => 16,
            _ => return Err(bad()),
        };
    }
    let permission = zoolock::permission_from_bits(bits).map_err(|_| bad())?;
    Ok(Acl::new(permission, AuthId::new(scheme, id)))
}

pub fn auth(text: &str) -> Result<(String, Vec<u8>), String> {
    match text.split_once(':') {
        Some((scheme, credential)) if !scheme.is_empty() => Ok((scheme.to_owned(), credential.as_bytes().to_vec())),
        _ => Err(format!("{:?} is not SCHEME:CREDENTIAL", redacted(text))),
    }
}

/// The scheme of a credential, for messages: never the credential itself.
fn redacted(text: &str) -> String {
    match text.split_once(':') {
        Some((scheme, _)) => format!("{scheme}:…"),
        None => "…".into(),
    }
}

/// Reads a file holding a secret; refused if its group or others may read it.
fn readable(path: &Path, what: &str) -> Result<(), String> {
    std::fs::File::open(path).map(drop).map_err(|e| format!("cannot read {what} {}: {e}", path.display()))
}

pub fn read_secret(path: &Path, what: &str) -> Result<String, String> {
    use std::os::unix::fs::MetadataExt;
    let shown = path.display();
    let metadata = std::fs::metadata(path).map_err(|e| format!("cannot read {what} {shown}: {e}"))?;
    if metadata.mode() & 0o077 != 0 {
        return Err(format!(
            "{what} {shown} can be read by other users (mode {:o}): chmod 600 {shown}",
            metadata.mode() & 0o777
        ));
    }
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {what} {shown}: {e}"))
}

/// A password from a file's first line, or from an environment variable.
fn password(file: Option<&Path>, var: &str, what: &str) -> Result<Option<Secret>, String> {
    if let Some(file) = file {
        let text = read_secret(file, what)?;
        return Ok(Some(Secret::new(text.lines().next().unwrap_or_default())));
    }
    Ok(std::env::var(var).ok().map(Secret::new))
}

impl Credentials {
    /// Adds the credentials, TLS and SASL to `options`; a message on bad input.
    pub fn apply(&self, mut options: SessionOptions) -> Result<SessionOptions, String> {
        if self.auth_on_command_line {
            eprintln!("zoolock: --auth is visible to every user of this machine; prefer {AUTH_VAR} or --auth-file");
        }
        options.auth.extend(self.auth.iter().cloned());
        if !self.acl.is_empty() {
            options = options.acls(self.acl.clone());
        }
        if let Ok(text) = std::env::var(AUTH_VAR) {
            options.auth.extend(entries(&text, AUTH_VAR)?);
        }
        if let Some(file) = &self.auth_file {
            let text = read_secret(file, "--auth-file")?;
            options.auth.extend(entries(&text, &file.display().to_string())?);
        }
        if let Some(tls) = self.tls()? {
            options = options.tls(tls);
        }
        if let Some(username) = &self.sasl_username {
            let mechanism = SaslMechanism::from_name(&self.sasl_mechanism).map_err(|e| e.to_string())?;
            let password = password(self.sasl_password_file.as_deref(), SASL_PASSWORD_VAR, "--sasl-password-file")?
                .ok_or_else(|| {
                    format!("--sasl-username needs a password: {SASL_PASSWORD_VAR} or --sasl-password-file")
                })?;
            options = options.sasl(SaslOptions { mechanism, username: username.clone(), password });
        }
        Ok(options)
    }

    fn tls(&self) -> Result<Option<TlsOptions>, String> {
        let wanted = self.tls
            || self.ca.is_some()
            || self.certfile.is_some()
            || self.keyfile.is_some()
            || self.keyfile_password_file.is_some()
            || self.no_check_hostname;
        if !wanted {
            return Ok(None);
        }
        let mut tls = TlsOptions::new().check_hostname(!self.no_check_hostname);
        // A file that cannot be read is the command line's fault (64), not
        // TLS's (70): said before any connection.
        if let Some(ca) = &self.ca {
            readable(ca, "--ca")?;
            tls = tls.ca(Pem::file(ca));
        }
        if let Some(certfile) = &self.certfile {
            readable(certfile, "--certfile")?;
            tls = tls.certfile(Pem::file(certfile));
        }
        match (&self.keyfile, &self.certfile) {
            (Some(keyfile), _) => tls = tls.keyfile(Pem::text(read_secret(keyfile, "--keyfile")?)),
            // The key may sit in the certificate's file: then that file is the secret.
            (None, Some(certfile)) => {
                let text = std::fs::read_to_string(certfile)
                    .map_err(|e| format!("cannot read --certfile {}: {e}", certfile.display()))?;
                if text.contains("PRIVATE KEY-----") {
                    read_secret(certfile, "--certfile (it holds a private key)")?;
                }
            }
            (None, None) => {}
        }
        if let Some(password) =
            password(self.keyfile_password_file.as_deref(), KEYFILE_PASSWORD_VAR, "--keyfile-password-file")?
        {
            tls = tls.keyfile_password(password);
        }
        Ok(Some(tls))
    }
}

/// `SCHEME:CREDENTIAL` lines; blank lines and `#` comments skipped.
fn entries(text: &str, from: &str) -> Result<Vec<(String, Vec<u8>)>, String> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| auth(line).map_err(|e| format!("{from}: {e}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_skip_comments_and_never_show_a_credential() {
        let parsed = entries("# ops\n\ndigest:locker:s3cret\n  ip:10.0.0.1 \n", "f").unwrap();
        assert_eq!(parsed, [("digest".into(), b"locker:s3cret".to_vec()), ("ip".into(), b"10.0.0.1".to_vec())]);
        let err = entries("nocolon-s3cret\n", "f").unwrap_err();
        assert!(!err.contains("s3cret"), "{err}");
    }
}
