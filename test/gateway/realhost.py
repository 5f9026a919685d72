"""The real bothy-host as a test runs it (docs/host.md): registered by the
application, paired through a node with `bothy-host pair`, confirmed by
its owner with the fingerprint pair printed, then `bothy-host run` in the
background with the shell the test gives.  Its stderr goes to a log file
the test can read."""
import os
import subprocess

from conftest import ROOT, WORK, new_id


def host_binary():
    """BOTHY_HOST, else bin/bothy-host of run-all's work directory, else the checkout's."""
    if os.environ.get("BOTHY_HOST"):
        return os.environ["BOTHY_HOST"]
    copied = os.path.join(ROOT, "bin", "bothy-host")
    return copied if os.path.exists(copied) else os.path.join(ROOT, "src", "host", "bothy-host")


class RealHost:
    """bothy-host paired with the node (its port) and running shell."""

    def __init__(self, node, terminal, name, shell, extra=()):
        self.dir = os.path.join(WORK, "%s-host-%d" % (name, os.getpid()))
        os.makedirs(self.dir, exist_ok=True)
        self.key = os.path.join(self.dir, "host.key")
        self.url = "http://127.0.0.1:%d" % node.port
        self.root = ["--allow-root"] if os.geteuid() == 0 else []
        self.owner = new_id()
        (self.host, code), = terminal.q(
            "SELECT host::text, pairing_code FROM bothy.terminal_host_register(%s, %s)", self.owner, name)
        self.logpath = os.path.join(self.dir, "host.log")
        self.log = open(self.logpath, "a")
        pair = subprocess.run([host_binary(), "pair", "--server", self.url, "--host", self.host,
                               "--code", code, "--key", self.key] + self.root,
                              stdout=subprocess.PIPE, stderr=self.log, timeout=30)
        assert pair.returncode == 0, self.text()
        assert terminal.q("SELECT bothy.terminal_host_confirm(%s, %s)", self.host,
                          pair.stdout.decode().strip()) == [("active",)]
        self.proc = subprocess.Popen([host_binary(), "run", "--server", self.url, "--key", self.key,
                                      "--shell", shell] + list(extra) + self.root,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=self.log)

    def text(self):
        with open(self.logpath) as f:
            return f.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
