"""https:// (docs/host.md, "Options"): the control and data connections over
wss://, the server's certificate checked against OpenSSL's CA store (here
a self-signed certificate named by SSL_CERT_FILE): an untrusted one is
refused before any op, a trusted one carries a pairing and a session.
"""
import datetime
import ipaddress
import os
import ssl
import tempfile

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from conftest import CODE, SHELL, WORK, run_host
from fakeserver import Device, FakeServer, uuid7


@pytest.fixture
def tls_fake():
    d = tempfile.mkdtemp(prefix="tls-", dir=WORK)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.utcnow()
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
    with open(cert_path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(key_path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert_path, key_path)
    server = FakeServer(ssl=ctx).start()
    server.cert = cert_path
    yield server
    server.stop()


def test_wss_with_a_trusted_certificate_only(tls_fake, hosts):
    host = uuid7()
    path = os.path.join(tempfile.mkdtemp(prefix="key-", dir=WORK), "host.key")
    tls_fake.pairing[host] = CODE
    status, out, log = run_host("pair", "--server", tls_fake.url, "--host", host, "--code", CODE,
                                "--key", path, env={"SSL_CERT_FILE": "/dev/null"})
    assert status == 1 and not os.path.exists(path), "an untrusted certificate is refused"
    assert tls_fake.connects == []

    trusted = {"SSL_CERT_FILE": tls_fake.cert}
    status, out, log = run_host("pair", "--server", tls_fake.url, "--host", host, "--code", CODE,
                                "--key", path, env=trusted)
    assert status == 0 and out.startswith("SHA256:"), log
    tls_fake.control()

    h = hosts("run", "--server", tls_fake.url, "--key", path, "--shell", SHELL, env=trusted)
    ctl = tls_fake.control()
    assert ctl.next_op("report", skip=())["sessions"] == []
    session, grant = ctl.open_session()
    ctl.next_op("session.started")
    d = Device(tls_fake.stream())
    d.send(b"echo over-$((1+1))-tls\n")
    d.read_until(b"over-2-tls")
    assert "tls=yes" in h.log
