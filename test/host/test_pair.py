"""bothy-host pair and the key file (docs/host.md, "Pairing", "The key file"):
the key written 0600 in its one-line form, the pair op signed over
"bothy-host-pair-v1\\n<host>\\n<nonce>" with the key it presents, the
fingerprint printed as the database computes it, and every refusal of a
key file the host must not write or use.
"""
import base64
import hashlib
import os
import stat
import tempfile

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from conftest import CODE, SHELL, WORK, key_seed, pair, run_host
from fakeserver import b64url, uuid7, verify


def fingerprint(public_key):
    """docs/host.md, "Pairing": SHA256: and the unpadded standard base64 of SHA-256 of the raw key."""
    return "SHA256:" + base64.b64encode(hashlib.sha256(public_key).digest()).decode().rstrip("=")


def keydir():
    return tempfile.mkdtemp(prefix="key-", dir=WORK)


def test_pair_writes_the_key_and_prints_its_fingerprint(fake):
    host = uuid7()
    path = os.path.join(keydir(), "host.key")
    fake.pairing[host] = CODE
    status, out, log = run_host("pair", "--server", fake.url, "--host", host, "--code", CODE,
                                "--key", path)
    assert status == 0, log
    ctl = fake.control()
    assert fake.refusals == []

    # the key file: 0600, one line, the host ID and the seed
    st = os.lstat(path)
    assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600
    with open(path, "rb") as f:
        text = f.read()
    assert len(text) == 95 and text.endswith(b"\n")
    prefix, host_id, seed = text.decode().split(" ")
    assert (prefix, host_id) == ("bothy-host-v1", host)
    public = Ed25519PrivateKey.from_private_bytes(key_seed(path)).public_key().public_bytes(
        Encoding.Raw, PublicFormat.Raw)

    # pair presented that key and proved it over the challenge's nonce
    assert ctl.hello["op"] == "pair" and ctl.hello["host"] == host
    assert ctl.hello["code"] == CODE and ctl.hello["public_key"] == b64url(public)
    assert verify(public, ctl.hello["sig"], "bothy-host-pair-v1", host, ctl.nonce)
    assert not verify(public, ctl.hello["sig"], "bothy-host-hello-v1", host, ctl.nonce)

    # the fingerprint, one line on stdout, as bothy.terminal_fingerprint computes it
    assert out == fingerprint(public) + "\n"
    # pair closes its connection itself, with 1000, once ready came
    assert ctl.wait_closed() == 1000
    # no ID, no key, no address in the log
    for secret in (host, seed.strip(), "127.0.0.1", str(fake.port)):
        assert secret not in log


def test_pair_refused_by_the_server_leaves_no_key(fake):
    host = uuid7()
    path = os.path.join(keydir(), "host.key")
    fake.pairing[host] = "zyxwvtsrqpnmkjhg"      # the owner's code is another
    status, out, log = run_host("pair", "--server", fake.url, "--host", host, "--code", CODE,
                                "--key", path)
    assert status == 1 and out == ""
    assert "refused the pairing" in log
    assert fake.refusals == ["pair"]
    assert not os.path.exists(path), "a pairing the server refused keeps no key"


def test_pair_without_a_server_leaves_no_key(fake):
    path = os.path.join(keydir(), "host.key")
    fake.stop()
    status, out, log = run_host("pair", "--server", fake.url, "--host", uuid7(), "--code", CODE,
                                "--key", path)
    assert status == 1 and "could not be reached" in log
    assert not os.path.exists(path)


def test_pair_never_overwrites_or_follows_a_link(fake):
    d = keydir()
    existing = os.path.join(d, "host.key")
    with open(existing, "w") as f:
        f.write("someone's file\n")
    host = uuid7()
    fake.pairing[host] = CODE
    status, _, log = run_host("pair", "--server", fake.url, "--host", host, "--code", CODE,
                              "--key", existing)
    assert status == 1 and "exists already" in log
    with open(existing) as f:
        assert f.read() == "someone's file\n"

    link = os.path.join(d, "link.key")
    target = os.path.join(d, "target.key")
    os.symlink(target, link)
    status, _, log = run_host("pair", "--server", fake.url, "--host", host, "--code", CODE,
                              "--key", link)
    assert status == 1 and not os.path.exists(target), "a key is never written through a link"
    assert fake.connects == [], "a refused key file stops before any connection"


def test_run_refuses_a_key_file_it_must_not_use(fake, paired):
    host, path = paired
    d = os.path.dirname(path)

    def refused(key, reason):
        status, _, log = run_host("run", "--server", fake.url, "--key", key, "--shell", SHELL)
        assert status == 1, log
        assert "key file refused: " + reason in log, log

    loose = os.path.join(d, "loose.key")
    with open(path, "rb") as f, open(loose, "wb") as g:
        g.write(f.read())
    for mode in (0o640, 0o604, 0o660, 0o644):
        os.chmod(loose, mode)
        refused(loose, "the key file is open to group or others (it must be mode 0600)")
    link = os.path.join(d, "link.key")
    os.symlink(path, link)
    refused(link, "the key file is a symbolic link")
    refused(os.path.join(d, "missing.key"), "the key file does not exist")
    refused(d, "the key file is not a regular file")
    broken = os.path.join(d, "broken.key")
    with open(path, "rb") as f, open(broken, "wb") as g:
        g.write(f.read().replace(b"bothy-host-v1", b"bothy-host-v2"))
    os.chmod(broken, 0o600)
    refused(broken, "the key file is not a bothy-host key file")
    # only the pairing's own connection reached the server
    assert len(fake.connects) == 1


def test_usage_errors_name_the_option_and_exit_2(fake, paired):
    _, path = paired
    cases = [
        (["run", "--server", fake.url], "--server and --key are required"),
        (["run", "--server", "ws://127.0.0.1:1", "--key", path], "--server must be http://"),
        (["run", "--server", fake.url + "/base", "--key", path], "--server must be http://"),
        (["run", "--server", fake.url, "--key", path, "--ring-size", "262143"],
         "--ring-size must be an integer from 262144 to 268435456"),
        (["run", "--server", fake.url, "--key", path, "--ring-size", "1M"],
         "--ring-size must be an integer"),
        (["run", "--server", fake.url, "--key", path, "--max-sessions", "33"],
         "--max-sessions must be an integer from 1 to 32"),
        (["run", "--server", fake.url, "--key", path, "--detach-timeout", "59999"],
         "--detach-timeout must be an integer from 60000 to 87000000"),
        (["run", "--server", fake.url, "--key", path, "--shell", "sh"],
         "--shell must be the absolute path"),
        (["run", "--server", fake.url, "--key", path, "--ring", "262144"], "unknown option"),
        (["run", "--server", fake.url, "--key", path, "--code", CODE], "unknown option"),
        (["pair", "--server", fake.url, "--key", path, "--host", uuid7()], "pair needs --host and --code"),
        (["pair", "--server", fake.url, "--key", path, "--host", uuid7().upper(), "--code", CODE],
         "--host must be a UUID in canonical lower case"),
        (["pair", "--server", fake.url, "--key", path, "--host", uuid7(), "--code", "0123456789abcdei"],
         "--code must be the 16-character pairing code"),
        (["serve"], "unknown command"),
    ]
    for args, message in cases:
        status, _, log = run_host(*args)
        assert status == 2, (args, log)
        assert message in log, (args, log)
        assert "usage: bothy-host" in log
    status, out, _ = run_host("--help", allow_root=False)
    assert status == 0 and out.startswith("usage: bothy-host pair")
    status, out, _ = run_host("--version", allow_root=False)
    assert status == 0 and out == "bothy-host 0.3.0\n"
