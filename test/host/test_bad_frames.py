"""Every bad binary frame a data connection brings is answered and logged
once (docs/host.md, "Data connections", "The stream's frames": "Rules",
and "Logs"): each kind host.md names, one case after the other on a new
grant of the same session, closes that data connection with 4002 and
writes exactly one warn line naming what was wrong, and the session lives
on for the next attach.  Where a field has a bound (rows, cols, a
frame's length), a frame at the bound goes first in the same pairing, so
the case sends the edge, not only a frame far past it.  That the frame
at the bound is taken is shown only where its refusal would log another
line (over 16384 bytes: a refused 16384-byte frame would not be "message
too long"); elsewhere a refused frame at the bound would also close 4002
with one MALFORMED line, which this test does not tell apart.  A resume's
offset bound (2^53 - 1) cannot go first: a second resume is itself
malformed.  The count of cases is len(BAD); the host's log must hold
exactly that many warn lines.
"""
import struct

from conftest import attach, open_session
from fakeserver import input_frame, resize, resume

MALFORMED = "malformed frame from the device"
TOO_LONG = "message too long on a data connection"
BEFORE_PAIRED = "terminal bytes before paired"

OFFSET_MAX = (1 << 53) - 1      # offsets are below 2^53 (host.md, "The stream's frames")
FRAME_MAX = 16384               # a frame, whole: the nodes' default --max-message

# (what, the relay's paired first, frames sent after it, the line it logs)
BAD = [
    ("input before resume", True, [input_frame(b"ls\n")], MALFORMED),
    ("resize before resume", True, [resize(24, 80)], MALFORMED),
    ("a second resume", True, [resume(), resume()], MALFORMED),
    ("an unknown type", True, [b"x"], MALFORMED),
    ("an empty binary message", True, [b""], MALFORMED),
    ("a begin frame from the device", True, [resume(), b"b" + struct.pack(">QQQ", 1, 0, 0)], MALFORMED),
    ("an output frame from the device", True, [resume(), b"o" + struct.pack(">Q", 0) + b"ls"],
     MALFORMED),
    ("a resume one byte short", True, [b"r" + b"\0" * 15], MALFORMED),
    ("a resume one byte too long", True, [b"r" + b"\0" * 17], MALFORMED),
    ("a resume offset of 2^53", True, [resume(0, OFFSET_MAX + 1)], MALFORMED),
    ("an input frame of the type byte alone", True, [resume(), input_frame(b"a"), b"i"], MALFORMED),
    ("a resize one byte short", True, [resume(), resize(24, 80)[:4]], MALFORMED),
    ("a resize one byte too long", True, [resume(), resize(24, 80) + b"\0"], MALFORMED),
    ("0 rows", True, [resume(), resize(1, 1), resize(0, 80)], MALFORMED),
    ("0 cols", True, [resume(), resize(1, 1), resize(24, 0)], MALFORMED),
    ("rows over 4096", True, [resume(), resize(4096, 4096), resize(4097, 80)], MALFORMED),
    ("cols over 4096", True, [resume(), resize(4096, 4096), resize(24, 4097)], MALFORMED),
    ("over 16384 bytes", True, [resume(), input_frame(b"#" * (FRAME_MAX - 1)), b"i" + b"a" * FRAME_MAX],
     TOO_LONG),
    ("a frame before paired", False, [resume()], BEFORE_PAIRED),
]


def warnings(log):
    return [line for line in log.splitlines() if " level=warn " in line]


def test_each_bad_frame_of_a_device_is_answered_and_logged_once(fake, running):
    h, ctl = running()
    session, grant, stream = open_session(fake, ctl)
    for i, (what, paired, frames, line) in enumerate(BAD):
        if i:
            stream = attach(fake, ctl, session)
        before = len(warnings(h.log))
        if paired:
            stream.send({"op": "paired"})
        for f in frames:
            stream.send(f)
        assert stream.wait_closed() == 4002, what
        new = warnings(h.log)[before:]
        assert len(new) == 1 and 'msg="%s"' % line in new[0], (what, new, h.log)
    # one warn line per bad frame, and no other
    assert len(warnings(h.log)) == len(BAD), h.log
    assert h.children(), "the session's shell lives on"
