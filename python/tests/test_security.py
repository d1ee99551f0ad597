"""kazoo's TLS and SASL arguments against real servers (secure_servers.py):
TLS with and without client certificates, an encrypted client key, the host
name check, SASL DIGEST-MD5; the failures end in typed errors within the
connect timeout; no secret reaches repr() or a message. The catalogue's
entries (tests/bad_inputs.txt) cover each wrong case once more."""

import pathlib
import time
import uuid

import pytest
import zoolock
from secure_servers import SASL_PASSWORD, SASL_USER, server

CONNECT_TIMEOUT = 5.0


def connect_and_lock(**arguments):
    client = zoolock.KazooClient(timeout=4.0, **arguments)
    client.start(timeout=15)
    try:
        lock = client.Lock(f"/zoolock-py/security-{uuid.uuid4().hex[:8]}", "me")
        assert lock.acquire(timeout=10)
        assert lock.contenders() == ["me"]
        lock.release()
    finally:
        client.stop()


def start_error(expected, **arguments):
    """The error start() raises, checked to come within the connect timeout."""
    client = zoolock.KazooClient(timeout=4.0, **arguments)
    started = time.monotonic()
    with pytest.raises(expected) as raised:
        client.start(timeout=CONNECT_TIMEOUT)
    elapsed = time.monotonic() - started
    assert elapsed <= CONNECT_TIMEOUT + 1, f"{raised.value} only after {elapsed:.1f} s"
    return raised.value


def test_tls_connect_and_lock():
    zk = server("tls")
    connect_and_lock(hosts=zk.secure, use_ssl=True, ca=zk.tls_files["ca"])


def test_tls_with_client_certificate_and_pathlike_and_pem_text():
    zk = server("mutual_tls")
    files = zk.tls_files
    connect_and_lock(hosts=zk.secure, use_ssl=True, ca=pathlib.Path(files["ca"]),
                     certfile=pathlib.Path(files["client_cert"]), keyfile=files["client_key"])
    connect_and_lock(hosts=zk.secure, use_ssl=True, ca=pathlib.Path(files["ca"]).read_text(),
                     certfile=files["client_cert"], keyfile=pathlib.Path(files["client_key"]).read_text())


def test_tls_encrypted_key_and_its_password():
    zk = server("mutual_tls")
    files = zk.tls_files
    arguments = dict(hosts=zk.secure, use_ssl=True, ca=files["ca"], certfile=files["client_cert"],
                     keyfile=files["client_key_encrypted"])
    connect_and_lock(keyfile_password=files["client_key_password"], **arguments)
    err = start_error(zoolock.TlsError, keyfile_password="not-the-pw", **arguments)
    assert "not-the-pw" not in str(err)


def test_tls_failure_is_kazoos_timeout_error():
    """kazoo's start() raises KazooTimeoutError when TLS fails: code catching it still does."""
    zk = server("tls")
    err = start_error(zoolock.KazooTimeoutError, hosts=zk.secure, use_ssl=True, ca=zk.tls_files["other_ca"])
    assert type(err) is zoolock.TlsError and "unknown issuer" in str(err)
    kazoo_handlers = pytest.importorskip("kazoo.handlers.threading")
    assert isinstance(err, kazoo_handlers.KazooTimeoutError)


def test_check_hostname():
    """kazoo's default is off: 127.0.0.1, which the certificate does not name, connects."""
    zk = server("tls")
    connect_and_lock(hosts=zk.secure_by_ip, use_ssl=True, ca=zk.tls_files["ca"])
    err = start_error(zoolock.TlsError, hosts=zk.secure_by_ip, use_ssl=True, ca=zk.tls_files["ca"],
                      check_hostname=True)
    assert "does not name this host" in str(err)


def test_sasl_connect_and_lock():
    zk = server("sasl")
    connect_and_lock(hosts=zk.connect,
                     sasl_options={"mechanism": "DIGEST-MD5", "username": SASL_USER, "password": SASL_PASSWORD})


def test_sasl_wrong_password_is_auth_failed():
    zk = server("sasl")
    err = start_error(zoolock.AuthFailedError, hosts=zk.connect,
                      sasl_options={"mechanism": "digest-md5", "username": SASL_USER, "password": "wrong-pw"})
    assert "wrong-pw" not in str(err)


def test_tls_arguments_need_use_ssl():
    for arguments in ({"ca": "/etc/zk/ca.pem"}, {"certfile": "c.pem"}, {"keyfile_password": "x"},
                      {"verify_certs": False}, {"check_hostname": True}):
        with pytest.raises(ValueError, match="needs TLS on"):
            zoolock.KazooClient(**arguments)
    # The core's check, word for word as in every language.
    with pytest.raises(ValueError) as refused:
        zoolock.KazooClient(ca="/etc/zk/ca.pem")
    assert str(refused.value) == ("invalid argument: ca needs TLS on (kazoo's use_ssl=True): "
                                  "with TLS off the session would connect in plaintext")
    with pytest.raises(TypeError):
        zoolock.KazooClient(use_ssl=True, ca=42)


def test_sasl_options_shapes():
    with pytest.raises(TypeError):
        zoolock.KazooClient(sasl_options=[("mechanism", "DIGEST-MD5")])
    with pytest.raises(ValueError, match="mechanism"):
        zoolock.KazooClient(sasl_options={"username": "u", "password": "p"})
    with pytest.raises(ValueError, match="GSSAPI"):
        zoolock.KazooClient(sasl_options={"mechanism": "GSSAPI", "principal": "zk"})
    with pytest.raises(ValueError, match="GSSAPI"):
        zoolock.KazooClient(sasl_options={"mechanism": "GSSAPI"})
    with pytest.raises(ValueError, match="password"):
        zoolock.KazooClient(sasl_options={"mechanism": "DIGEST-MD5", "username": "u"})


def test_repr_never_shows_secrets():
    pem = "-----BEGIN PRIVATE KEY-----\nS3CRETKEY\n-----END PRIVATE KEY-----\n"
    client = zoolock.KazooClient(
        hosts="127.0.0.1:1", use_ssl=True, ca="/etc/zk/ca.pem", certfile="/etc/zk/c.pem", keyfile=pem,
        keyfile_password="kp-1234", auth_data=[("digest", "locker:hunter2")],
        sasl_options={"mechanism": "DIGEST-MD5", "username": "locker", "password": "sasl-pw-99"})
    shown = repr(client)
    for secret in ("S3CRETKEY", "kp-1234", "hunter2", "sasl-pw-99"):
        assert secret not in shown
    with pytest.raises(zoolock.TlsError) as raised:
        client.start(timeout=2)
    for secret in ("S3CRETKEY", "kp-1234", "hunter2", "sasl-pw-99"):
        assert secret not in str(raised.value)
