"""docs/performance.md against what it is checked by and what cites it.

core/test_core_docs.py's test_performance_md_is_a_reference checks the
page's shape (five parts a section, a dated Latest, "bench/" in each
Command).  This file checks what the shape cannot (review 26b, findings
1, 2 and 10):

- every bench script of bench/ has a section whose Command names it, and
  every BOTHY_* variable its header names (the leading comment of a shell
  script, the docstring of a Python one) is in one of those Commands;
- every ratio docs/gateway.md and docs/terminal.md quote beside a mention
  of performance.md (in the same table row or paragraph) is on the page,
  as written: a figure quoted must be found there, not recomputed;
- every section docs/scaling.md cites as performance.md, "Title" is a
  section of the page, and the figures it puts right after the citation
  (up to the closing parenthesis) are in that section.

Needs no process: docs/ and bench/ of BOTHY_ROOT (test/run-all copies the
benches' scripts for this test).
"""
import os
import re

import pytest

from conftest import ROOT

DOCS = os.path.join(ROOT, "docs")
BENCH = os.path.join(ROOT, "bench")
# a bench's own parts beside it, not benches
NOT_A_BENCH = (".c", ".h", ".sql", ".sh", ".json", ".md")
RATIO = re.compile(r"(?<![\d.])[01]\.\d{2,3}(?![\d.])")
NUMBER = re.compile(r"(?<![\d.,])\d[\d,]*(?:\.\d+)?(?![\d])")


def doc(name):
    with open(os.path.join(DOCS, name)) as f:
        return f.read()


def sections(text):
    """{title: body} of the page's "## " sections."""
    parts = re.split(r"^## ", text, flags=re.M)[1:]
    return {p.split("\n", 1)[0].strip(): p for p in parts}


def units(text):
    """A table's rows one by one, every other paragraph whole: where a
    figure is "beside" a mention."""
    found = []
    for para in re.split(r"\n\s*\n", text):
        lines = para.strip().splitlines()
        if lines and all(line.lstrip().startswith("|") for line in lines):
            found.extend(lines)
        else:
            found.append(para)
    return found


def bench_header(path):
    with open(path) as f:
        text = f.read()
    if text.startswith("#!") and "python" in text.split("\n", 1)[0]:
        m = re.search(r'"""(.*?)"""', text, re.S)
        return m.group(1) if m else ""
    lines = text.split("\n")[1:]
    header = []
    for line in lines:
        if not line.startswith("#"):
            break
        header.append(line)
    return "\n".join(header)


def benches():
    if not os.path.isdir(BENCH):
        pytest.fail("no bench/ under %s: test/run-all copies the benches' scripts for "
                    "this test" % ROOT)
    names = sorted(n for n in os.listdir(BENCH)
                   if os.path.isfile(os.path.join(BENCH, n)) and "." not in n
                   and not n.endswith(NOT_A_BENCH))
    assert len(names) >= 12, names
    return names


def commands_naming(page, name):
    """The Command parts of every section that names bench/NAME in its
    Command (a part runs to the next bold part or the section's end)."""
    found = []
    for title, body in sections(page).items():
        for m in re.finditer(r"\*\*Command\.\*\*(.*?)(?=\n\*\*[A-Z]|\*\*Latest|\Z)", body, re.S):
            if re.search(r"\bbench/%s\b" % re.escape(name), m.group(1)):
                found.append(m.group(1))
    return found


def test_every_bench_has_a_command_naming_each_of_its_variables():
    page = doc("performance.md")
    missing = []
    checked = 0
    for name in benches():
        commands = commands_naming(page, name)
        if not commands:
            missing.append("bench/%s: no section's Command names it" % name)
            continue
        text = "\n".join(commands)
        header = bench_header(os.path.join(BENCH, name))
        for var in sorted(set(re.findall(r"\bBOTHY_[A-Z0-9_]+", header))):
            checked += 1
            if not re.search(r"\b%s\b" % var, text):
                missing.append("bench/%s: %s is in its header, not in its Command" % (name, var))
    # the benches with variables: fanout_vs_notify, gateway_*, peer_socketio, terminal_relay
    assert checked >= 18, checked
    assert missing == []


def test_a_command_missing_a_variable_is_caught():
    """The check above on a planted page: the terminal relay's Command
    without BOTHY_STREAM_WINDOW must not pass."""
    page = doc("performance.md")
    commands = commands_naming(page, "terminal_relay")
    assert len(commands) == 1 and "BOTHY_STREAM_WINDOW" in commands[0]
    planted = page.replace(commands[0], commands[0].replace("BOTHY_STREAM_WINDOW", "BOTHY_X"))
    assert "BOTHY_STREAM_WINDOW" not in "\n".join(commands_naming(planted, "terminal_relay"))
    assert "BOTHY_STREAM_WINDOW" in bench_header(os.path.join(BENCH, "terminal_relay"))


def quoted(name):
    """(doc, unit, its ratios) of each unit of a doc that mentions
    performance.md and quotes ratios."""
    found = []
    for u in units(doc(name)):
        ratios = RATIO.findall(u)
        if "performance.md" in u and ratios:
            found.append((name, u, ratios))
    return found


def sections_about(page, unit):
    """The page's sections about what a unit names: a bench (bench/NAME)
    or a node's option (--name)."""
    names = set(re.findall(r"\bbench/[a-z_]+", unit)) | set(re.findall(r"--[a-z][a-z-]+", unit))
    return [body for body in sections(page).values() if any(n in body for n in names)]


def test_ratios_quoted_beside_performance_md_are_on_the_page():
    """Each unit's ratios, as written, in one section about what the unit
    names: a figure found elsewhere on the page (another bench's 0.57) is
    not the one quoted."""
    page = doc("performance.md")
    units_quoting = quoted("gateway.md") + quoted("terminal.md")
    # --stream-window's row and terminal.md's "Slow networks" quote the window's ratios
    assert len({r for _, _, rs in units_quoting for r in rs}) >= 3, units_quoting
    wrong = []
    for name, unit, ratios in units_quoting:
        about = sections_about(page, unit)
        if not any(all(re.search(r"(?<![\d.])%s(?![\d])" % re.escape(r), body) for r in ratios)
                   for body in about):
            wrong.append("%s: %s (%s...): not together in a section about it (%d found)"
                         % (name, ", ".join(ratios), unit.strip()[:60], len(about)))
    assert wrong == []


def test_scaling_md_cites_sections_and_figures_the_page_has():
    page = sections(doc("performance.md"))
    cited = 0
    wrong = []
    for m in re.finditer(r'performance\.md, "([^"]+)"([^)|]*)', doc("scaling.md")):
        title, after = " ".join(m.group(1).split()), m.group(2)
        cited += 1
        if title not in page:
            wrong.append('"%s": no such section' % title)
            continue
        body = page[title]
        for n in NUMBER.findall(after):
            if not re.search(r"(?<![\d.,])%s(?![\d])" % re.escape(n), body):
                wrong.append('"%s": %s is not in the section' % (title, n))
    assert cited >= 4, cited
    assert "quieter run" not in doc("scaling.md") or "quieter" in doc("performance.md")
    assert wrong == []
