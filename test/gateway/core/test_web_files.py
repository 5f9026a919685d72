"""The --web directory's files (docs/protocol.md, "Static files"): only a
regular file of DIR is served.  A FIFO, a symbolic link to a file outside
DIR, a directory, a socket (and a device node, when the test runs as root)
each answer 404, and a request for one never stops the node: a FIFO once
held its open() until a writer came, and with it /healthz and every client
(issue 17)."""
import concurrent.futures
import errno
import os
import socket
import stat
import threading
import time

from conftest import WORK, heartbeat, identify, run

PAGE = "<!doctype html><title>bothy</title>\n"


def make_web_dir(name):
    """DIR with a regular page and one planted file of every other kind; and
    a file outside DIR that a link points at."""
    base = os.path.join(WORK, name)
    web = os.path.join(base, "web")
    os.makedirs(web)
    with open(os.path.join(web, "index.html"), "w") as f:
        f.write(PAGE)
    with open(os.path.join(web, "plain.js"), "w") as f:
        f.write("console.log(1);\n")
    outside = os.path.join(base, "outside.html")
    with open(outside, "w") as f:
        f.write("a secret outside DIR\n")
    os.mkfifo(os.path.join(web, "fifo.html"))
    os.symlink(outside, os.path.join(web, "link.html"))
    os.mkdir(os.path.join(web, "dir.html"))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(os.path.join(web, "sock.html"))
    planted = ["fifo.html", "link.html", "dir.html", "sock.html"]
    if os.geteuid() == 0:
        # the character device of /dev/null: opening it has no effect, but
        # the node must not open it at all
        os.mknod(os.path.join(web, "dev.html"), stat.S_IFCHR | 0o644, os.makedev(1, 3))
        planted.append("dev.html")
    # the user the node runs as (postgres under run-all) reads DIR
    os.chmod(base, 0o755)
    os.chmod(web, 0o755)
    return web, planted, sock


def release_fifo(path):
    """Opens the FIFO for writing if a reader waits on it (a node stuck in
    open() is let go, so a failing test still stops its node)."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass                    # no reader: nobody is stuck


def test_only_regular_files_are_served_and_a_fifo_never_stops_the_node(gateways, keys):
    web, planted, sock = make_web_dir("web-files")
    fifo = os.path.join(web, "fifo.html")
    node = gateways(1, extra=("--web", web))
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    try:
        assert node.http("/") == (200, PAGE)
        assert node.http("/plain.js")[0] == 200

        # the FIFO's request first, then the node must go on serving
        started = time.monotonic()
        pending = pool.submit(node.http, "/fifo.html")
        time.sleep(0.2)
        assert node.http("/healthz") == (200, "ok\n")

        async def client():
            ws, ready = await identify(node.url, keys.person())
            reply = await heartbeat(ws)
            await ws.close()
            return ready["op"], reply["op"]
        assert run(client()) == ("ready", "heartbeat_ack")
        assert pending.result(timeout=10)[0] == 404
        assert time.monotonic() - started < 5

        for name in planted:
            assert node.http("/" + name)[0] == 404, name
        # no reader is left holding the FIFO: a writer that does not wait finds none
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            assert False, "the FIFO has a reader"
        except OSError as e:
            assert e.errno == errno.ENXIO, e
        assert node.http("/healthz") == (200, "ok\n")
    finally:
        release_fifo(fifo)
        pool.shutdown(wait=False)
        sock.close()


def test_a_fifo_swapped_in_for_a_page_between_check_and_open_never_stops_the_node(gateways, keys):
    """The race of a name that changes under the node: a thread swaps a FIFO
    and a regular page over one name as fast as it can, while the node is
    asked for that name again and again.  Whatever it finds, it answers the
    page or 404 at once: it decides on what it opened, and opening the FIFO
    does not wait."""
    web, _, sock = make_web_dir("web-swap")
    sock.close()
    page, fifo = os.path.join(web, "page-src"), os.path.join(web, "fifo-src")
    with open(page, "w") as f:
        f.write(PAGE)
    os.mkfifo(fifo)
    target = os.path.join(web, "swap.html")
    os.link(page, target)
    node = gateways(1, extra=("--web", web))
    stop = threading.Event()
    swaps = [0]

    def swapper():
        while not stop.is_set():
            for src, tmp in ((fifo, "tmp-fifo"), (page, "tmp-page")):
                tmp = os.path.join(web, tmp)
                os.link(src, tmp)
                os.rename(tmp, target)      # atomic: the name is always one of the two
            swaps[0] += 1

    thread = threading.Thread(target=swapper, daemon=True)
    thread.start()
    seen = {}
    try:
        deadline = time.monotonic() + 6
        while time.monotonic() < deadline and len(seen.get(200, [])) + len(seen.get(404, [])) < 400:
            status, body = node.http("/swap.html")
            seen.setdefault(status, []).append(body)
            assert status in (200, 404), "the node did not answer (a FIFO's open blocked it?)"
            if status == 200:
                assert body == PAGE
    finally:
        stop.set()
        thread.join(5)
        release_fifo(fifo)
    # both sides of the race were met, over many swaps
    assert len(seen.get(200, [])) > 10 and len(seen.get(404, [])) > 10, {k: len(v) for k, v in seen.items()}
    assert swaps[0] > 1000, swaps
    assert node.http("/healthz") == (200, "ok\n")
