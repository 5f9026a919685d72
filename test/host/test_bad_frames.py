"""Every bad frame of a device is answered and logged once (docs/host.md,
"Rules" and "Logs"): each kind host.md names, one after the other on a
new grant of the same session, closes that data connection with 4002 and
writes exactly one warn line naming what was wrong, and the session lives
on for the next attach.  Seven frames, seven closes, seven lines.
"""
from conftest import attach, open_session
from fakeserver import input_frame, resize, resume

MALFORMED = "malformed frame from the device"
TOO_LONG = "message too long on a data connection"

# (what, frames sent after paired, the line it logs)
BAD = [
    ("input before resume", [input_frame(b"ls\n")], MALFORMED),
    ("resize before resume", [resize(24, 80)], MALFORMED),
    ("a second resume", [resume(), resume()], MALFORMED),
    ("an unknown type", [b"x"], MALFORMED),
    ("a resume one byte short", [b"r" + b"\0" * 15], MALFORMED),
    ("a size out of range", [resume(), resize(0, 80)], MALFORMED),
    ("over 16384 bytes", [b"i" + b"a" * 16384], TOO_LONG),
]


def test_each_bad_frame_of_a_device_is_answered_and_logged_once(fake, running):
    h, ctl = running()
    session, grant, stream = open_session(fake, ctl)
    for i, (what, frames, line) in enumerate(BAD):
        if i:
            stream = attach(fake, ctl, session)
        before = h.log.count(line)
        stream.send({"op": "paired"})
        for f in frames:
            stream.send(f)
        assert stream.wait_closed() == 4002, what
        assert h.log.count(line) == before + 1, (what, h.log)
    # one line per bad frame, no other warning about them
    assert h.log.count(MALFORMED) + h.log.count(TOO_LONG) == len(BAD), h.log
    assert h.children(), "the session's shell lives on"
