//! kazoo's TLS and SASL arguments of `KazooClient` (`use_ssl`, `ca`,
//! `certfile`, `keyfile`, `keyfile_password`, `verify_certs`,
//! `check_hostname`, `sasl_options`) onto the core's `TlsOptions` and
//! `SaslOptions`, same names. Secrets go into the core's `Secret`s: no
//! `repr()` or error shows them.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use zoolock::{Error, Pem, SaslMechanism, SaslOptions, SessionOptions, TlsOptions};

use crate::errors::IntoPy;

/// kazoo's TLS arguments, as `KazooClient` received them.
pub struct TlsArgs<'a, 'py> {
    pub use_ssl: bool,
    pub ca: Option<&'a Bound<'py, PyAny>>,
    pub certfile: Option<&'a Bound<'py, PyAny>>,
    pub keyfile: Option<&'a Bound<'py, PyAny>>,
    pub keyfile_password: Option<&'a Bound<'py, PyAny>>,
    pub verify_certs: bool,
    pub check_hostname: bool,
}

/// A PEM argument: a file name (str or os.PathLike), or the PEM itself.
fn pem(value: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Option<Pem>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let path =
        value.py().import("os")?.call_method1("fspath", (value,)).and_then(|p| p.extract::<String>()).map_err(
            |_| PyTypeError::new_err(format!("{name} must be a file name (str or os.PathLike) or PEM text")),
        )?;
    Ok(Some(Pem::from(path)))
}

/// Adds TLS to `options` if `use_ssl`. TLS arguments without it are a
/// `ValueError` here, in the constructor (kazoo ignores them: a client that
/// meant TLS would then connect in plaintext): the core's check.
pub fn apply_tls(options: SessionOptions, args: TlsArgs<'_, '_>) -> PyResult<SessionOptions> {
    let mut tls =
        TlsOptions::new().enabled(args.use_ssl).verify_certs(args.verify_certs).check_hostname(args.check_hostname);
    tls.ca = pem(args.ca, "ca")?;
    tls.certfile = pem(args.certfile, "certfile")?;
    tls.keyfile = pem(args.keyfile, "keyfile")?;
    tls.keyfile_password = match args.keyfile_password.filter(|v| !v.is_none()) {
        Some(password) => Some(
            password.extract::<String>().map_err(|_| PyTypeError::new_err("keyfile_password must be a str"))?.into(),
        ),
        None => None,
    };
    if args.use_ssl {
        return Ok(options.tls(tls));
    }
    tls.validate().py_err()?;
    // kazoo's default is False, so True is asked for; the core's default is
    // on and cannot tell it from one given.
    if args.check_hostname {
        let refused = "check_hostname=True needs TLS on (kazoo's use_ssl=True): with TLS off the session would connect in plaintext";
        return Err(Error::InvalidArgument(refused.into())).py_err();
    }
    Ok(options)
}

/// kazoo's `sasl_options`: a dict of `mechanism`, `username`, `password`.
pub fn apply_sasl(options: SessionOptions, sasl_options: Option<&Bound<'_, PyAny>>) -> PyResult<SessionOptions> {
    let Some(sasl_options) = sasl_options.filter(|v| !v.is_none()) else {
        return Ok(options);
    };
    let dict = sasl_options
        .cast::<PyDict>()
        .map_err(|_| PyTypeError::new_err("sasl_options must be a dict of mechanism, username and password"))?;
    let mut given = std::collections::BTreeMap::new();
    for (key, value) in dict.iter() {
        let key: String = key.extract().map_err(|_| PyTypeError::new_err("sasl_options keys must be str"))?;
        let value: String =
            value.extract().map_err(|_| PyTypeError::new_err(format!("sasl_options[{key:?}] must be a str")))?;
        given.insert(key, value);
    }
    let mechanism = given.remove("mechanism").ok_or_else(|| PyValueError::new_err("sasl_options needs a mechanism"))?;
    // The mechanism first: GSSAPI's own keys (principal, service) get the message that says it is not built.
    let mechanism = SaslMechanism::from_name(&mechanism).py_err()?;
    let mut take = |key: &str| {
        given
            .remove(key)
            .ok_or_else(|| PyValueError::new_err(format!("sasl_options needs a {key} for {}", mechanism.name())))
    };
    let sasl = match mechanism {
        SaslMechanism::DigestMd5 => SaslOptions::digest_md5(take("username")?, take("password")?),
        other => return Err(PyValueError::new_err(format!("SASL {} is not supported", other.name()))),
    };
    if let Some(other) = given.keys().next() {
        return Err(PyValueError::new_err(format!(
            "sasl_options: {} takes no {other:?} (only mechanism, username and password)",
            mechanism.name()
        )));
    }
    Ok(options.sasl(sasl))
}
