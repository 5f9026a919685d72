"""The reference docs keep up with the code: a setting, a function or a
signal kind that is missing from its page fails here."""
import os
import re

import pytest

from conftest import ROOT, Instance


def doc(name):
    with open(os.path.join(ROOT, "docs", name)) as f:
        return f.read()


@pytest.fixture(scope="module")
def catalog():
    inst = Instance("docs")
    inst.start()
    settings = [r[0] for r in inst.query("SELECT name FROM pg_settings WHERE name LIKE 'bothy.%%' ORDER BY 1")]
    functions = [r[0] for r in inst.query(
        "SELECT DISTINCT proname FROM pg_proc WHERE pronamespace = 'bothy'::regnamespace ORDER BY 1")]
    inst.close()
    return settings, functions


def test_every_setting_has_its_section_in_configuration_md(catalog):
    settings, _ = catalog
    text = doc("configuration.md")
    assert len(settings) >= 11
    missing = [s for s in settings if not re.search(r"^#+ `%s`\s*$" % re.escape(s), text, re.M)]
    assert missing == []


def test_every_function_is_documented_in_sql_api_md(catalog):
    _, functions = catalog
    text = doc("sql-api.md")
    missing = [f for f in functions if "bothy.%s(" % f not in text]
    assert missing == []


def test_every_signal_kind_is_documented_in_signals_md():
    text = doc("signals.md")
    kinds = ["gateway.typing", "gateway.run", "gateway.agent_presence", "gateway.device",
             "gateway.consumer", "gateway.hint", "terminal.session_open", "terminal.host_close",
             "terminal.host_present", "terminal.host_gone", "terminal.session_paired",
             "terminal.log"]
    assert [k for k in kinds if "`%s`" % k not in text] == []
