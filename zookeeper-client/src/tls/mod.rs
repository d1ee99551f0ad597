mod client;
mod options;
mod verifier;

pub(crate) use self::client::*;
pub use self::options::*;
pub use self::verifier::TrustedSelfSigned;
use self::verifier::*;
