use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::{CertificateDer, CertificateRevocationListDer, ServerName, UnixTime};
use rustls::{
    CertRevocationListError, CertificateError, DigitallySignedStruct, Error as TlsError, ExtendedKeyPurpose,
    OtherError, RootCertStore, SignatureScheme,
};
use webpki::{
    BorrowedCertRevocationList, CertRevocationList, EndEntityCert, InvalidNameContext, KeyUsage,
    RevocationOptionsBuilder,
};

use crate::client::Result;

// Rustls tends to make disable of hostname verification verbose since it exposes man-in-the-middle
// attacks. Though, there are still attempts to disable hostname verification in rustls, but no got
// merged until now.
// * Allow disabling Hostname Verification: https://github.com/rustls/rustls/issues/578
// * Dangerous verifiers API proposal: https://github.com/rustls/rustls/pull/1197
#[derive(Debug)]
pub(super) struct NoHostnameVerificationServerCertVerifier {
    roots: RootCertStore,
    crls: Vec<CertRevocationList<'static>>,
    supported: WebPkiSupportedAlgorithms,
}

impl NoHostnameVerificationServerCertVerifier {
    pub unsafe fn new(
        roots: RootCertStore,
        crls: Vec<CertificateRevocationListDer<'static>>,
        provider: &Arc<CryptoProvider>,
    ) -> Self {
        let crls: Vec<_> = crls
            .iter()
            .map(|crl| BorrowedCertRevocationList::from_der(crl.as_ref()).unwrap().to_owned().unwrap())
            .map(CertRevocationList::Owned)
            .collect();
        Self { roots, crls, supported: provider.signature_verification_algorithms }
    }
}

fn extended_key_purpose(values: impl Iterator<Item = usize>) -> ExtendedKeyPurpose {
    let values = values.collect::<Vec<_>>();
    match &*values {
        KeyUsage::CLIENT_AUTH_REPR => ExtendedKeyPurpose::ClientAuth,
        KeyUsage::SERVER_AUTH_REPR => ExtendedKeyPurpose::ServerAuth,
        _ => ExtendedKeyPurpose::Other(values),
    }
}

// Copied from https://github.com/rustls/rustls/blob/v/0.23.29/rustls/src/webpki/mod.rs#L59
// LICENSE: https://github.com/rustls/rustls/blob/v/0.23.29/LICENSE (any of Apache 2.0, MIT and ISC)
fn pki_error(error: webpki::Error) -> TlsError {
    use webpki::Error::*;
    match error {
        BadDer | BadDerTime | TrailingData(_) => CertificateError::BadEncoding.into(),
        CertNotValidYet { time, not_before } => CertificateError::NotValidYetContext { time, not_before }.into(),
        CertExpired { time, not_after } => CertificateError::ExpiredContext { time, not_after }.into(),
        InvalidCertValidity => CertificateError::Expired.into(),
        UnknownIssuer => CertificateError::UnknownIssuer.into(),
        CertNotValidForName(InvalidNameContext { expected, presented }) => {
            CertificateError::NotValidForNameContext { expected, presented }.into()
        }
        CertRevoked => CertificateError::Revoked.into(),
        UnknownRevocationStatus => CertificateError::UnknownRevocationStatus.into(),
        CrlExpired { time, next_update } => CertificateError::ExpiredRevocationListContext { time, next_update }.into(),
        IssuerNotCrlSigner => CertRevocationListError::IssuerInvalidForCrl.into(),

        InvalidSignatureForPublicKey => CertificateError::BadSignature.into(),
        #[allow(deprecated)]
        UnsupportedSignatureAlgorithm
        | UnsupportedSignatureAlgorithmContext(_)
        | UnsupportedSignatureAlgorithmForPublicKey => CertificateError::UnsupportedSignatureAlgorithm.into(),

        InvalidCrlSignatureForPublicKey => CertRevocationListError::BadSignature.into(),
        #[allow(deprecated)]
        UnsupportedCrlSignatureAlgorithm
        | UnsupportedCrlSignatureAlgorithmContext(_)
        | UnsupportedCrlSignatureAlgorithmForPublicKey => CertRevocationListError::UnsupportedSignatureAlgorithm.into(),

        #[allow(deprecated)]
        RequiredEkuNotFound => CertificateError::InvalidPurpose.into(),
        RequiredEkuNotFoundContext(webpki::RequiredEkuNotFoundContext { required, present }) => {
            CertificateError::InvalidPurposeContext {
                required: extended_key_purpose(required.oid_values()),
                presented: present.into_iter().map(|eku| extended_key_purpose(eku.into_iter())).collect(),
            }
            .into()
        }

        _ => CertificateError::Other(OtherError(Arc::new(error))).into(),
    }
}

impl ServerCertVerifier for NoHostnameVerificationServerCertVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, TlsError> {
        let cert = EndEntityCert::try_from(end_entity).map_err(pki_error)?;
        let crls = self.crls.iter().collect::<Vec<_>>();
        let revocation = match RevocationOptionsBuilder::new(&crls) {
            Err(_) => None,
            Ok(builder) => Some(builder.build()),
        };
        cert.verify_for_usage(
            self.supported.all,
            &self.roots.roots,
            intermediates,
            now,
            webpki::KeyUsage::server_auth(),
            revocation,
            None,
        )
        .map_err(pki_error)?;
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.supported)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.supported)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.supported.supported_schemes()
    }
}

/// Accepts a server certificate that is itself one of the trusted roots, as
/// OpenSSL and Java do: a self-signed certificate made with `openssl req
/// -x509` is marked CA:TRUE, which webpki refuses as an end entity
/// (`CaUsedAsEndEntity`) even when the client trusts exactly it. Trusted by
/// identity (its subject and key are a root's), the server's name is still
/// checked against it (unless hostname verification is off) and its
/// handshake signature verified; every other certificate goes through
/// `inner` unchanged. (zoolock's addition: ZOOLOCK.md.)
#[derive(Debug)]
pub struct TrustedSelfSigned {
    inner: Arc<dyn ServerCertVerifier>,
    roots: RootCertStore,
    hostname_verification: bool,
}

impl TrustedSelfSigned {
    /// Wraps `inner`, whose trusted roots are `roots`.
    pub fn new(inner: Arc<dyn ServerCertVerifier>, roots: RootCertStore, hostname_verification: bool) -> Self {
        Self { inner, roots, hostname_verification }
    }

    fn is_root(&self, cert: &CertificateDer<'_>) -> bool {
        let Ok(anchor) = webpki::anchor_from_trusted_cert(cert) else { return false };
        self.roots.roots.iter().any(|root| {
            root.subject.as_ref() == anchor.subject.as_ref()
                && root.subject_public_key_info.as_ref() == anchor.subject_public_key_info.as_ref()
        })
    }
}

fn ca_used_as_end_entity(err: &TlsError) -> bool {
    match err {
        TlsError::InvalidCertificate(CertificateError::Other(OtherError(other))) => {
            matches!(other.downcast_ref::<webpki::Error>(), Some(webpki::Error::CaUsedAsEndEntity))
        }
        _ => false,
    }
}

impl ServerCertVerifier for TrustedSelfSigned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, TlsError> {
        let refused = match self.inner.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Ok(verified) => return Ok(verified),
            Err(refused) => refused,
        };
        if !ca_used_as_end_entity(&refused) || !self.is_root(end_entity) {
            return Err(refused);
        }
        if self.hostname_verification {
            let cert = EndEntityCert::try_from(end_entity).map_err(pki_error)?;
            cert.verify_is_valid_for_subject_name(server_name).map_err(pki_error)?;
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}
