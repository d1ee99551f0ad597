//! The harness's error type: a message meant for a human reading a test failure.

use std::fmt;

/// An error from the harness. The message says what failed and, for a
/// server, where its log file is.
#[derive(Debug, Clone)]
pub struct Error(pub(crate) String);

impl Error {
    pub(crate) fn new(msg: impl Into<String>) -> Error {
        Error(msg.into())
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error(e.to_string())
    }
}

/// Result with the harness's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
