"""What the single-mode tests share (D-M7-17-7; docs/configuration.md,
"bothy.cluster_mode"): a LISTEN connection on the module's instance (the
fixture `listener`, on the module's own `pg`) and `sentinel`, which tells
"no signal was staged" from "none has arrived yet" by publishing one of its
own and reading up to it.  Used by the gateway route's single-mode test and
the terminal's; a helper module, so that neither test module imports the
other (pytest would then depend on the order it collects them in)."""
import json

import pytest

import conftest
from conftest import new_id


@pytest.fixture
def listener(pg):
    listener = conftest._process.Listener(pg)
    yield listener
    listener.close()


def sentinel(pg, listener):
    """Publishes terminal.host_close from SQL and returns every payload the
    listener heard up to it (the sentinel itself left out)."""
    host = new_id()
    pg.query("SELECT bothy.publish('terminal.host_close', jsonb_build_object('host_id', %s::text))",
             host)
    heard = []
    while True:
        payload = json.loads(listener.next())
        if payload == {"kind": "terminal.host_close", "host_id": host}:
            return heard
        heard.append(payload)
