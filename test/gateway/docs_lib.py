"""What the docs tests share: the gateway's sources (the fixture `src`),
the pages (`doc`), docs/asyncapi.yaml (the fixture `api`) with the small
JSON Schema validator of the keywords it uses (`valid`, `resolve`), the
Markdown tables (`table_rows`), C string literals (`LITERALS`,
`c_string`) and the links between the pages (`links_resolve`).

One module of helpers, not a test module, so that the docs tests of each
room (core/, clients/, terminal/) and test/host's docs test (through
gateway_module in test/host/conftest.py) import it without depending on
the order pytest collects them in.  The sources are read from
BOTHY_SRC_DIR (a copy of src/gateway's tree of *.c and *.h; test/run-all
sets it), the docs from BOTHY_ROOT/docs.
"""
import os
import re

import pytest
import yaml

from conftest import ROOT

DOCS = os.path.join(ROOT, "docs")


# --- inputs -------------------------------------------------------------------

@pytest.fixture(scope="module")
def src():
    """The gateway's sources: {path under src/gateway ("core/conn.h"): text}.
    Absent sources fail the test: a docs check that cannot see the code
    checks nothing."""
    where = os.environ.get("BOTHY_SRC_DIR")
    if not where:
        pytest.fail("BOTHY_SRC_DIR is not set: it must name a copy of the tree of src/gateway")
    if not os.path.isfile(os.path.join(where, "clients", "protocol.c")):
        pytest.fail("BOTHY_SRC_DIR=%s holds no clients/protocol.c: not the gateway's sources" % where)
    files = {}
    for top, _, names in sorted(os.walk(where)):
        for name in sorted(names):
            if name.endswith((".c", ".h")):
                path = os.path.join(top, name)
                with open(path) as f:
                    files[os.path.relpath(path, where)] = f.read()
    # the log writer the gateway links from src/common (beside BOTHY_SRC_DIR):
    # its own records are the node's too
    with open(os.path.join(os.path.dirname(where), "common", "logline.c")) as f:
        files["../common/logline.c"] = f.read()
    return files



def joined(src, names):
    """The texts of the sources names, one after the other."""
    return "".join(src[name] for name in names)


def doc(name):
    with open(os.path.join(DOCS, name)) as f:
        return f.read()


def table_rows(text):
    """Every Markdown table row as its list of stripped cells (an escaped
    pipe, \\|, stays inside its cell)."""
    return [[c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
            for line in text.splitlines() if line.lstrip().startswith("|")]


def c_string(literals):
    """The value of adjacent C string literals ("a" "b"), escapes undone."""
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"', literals)
    return "".join(parts).encode().decode("unicode_escape")


LITERALS = r'((?:"(?:[^"\\]|\\.)*"\s*)+)'


# --- docs/asyncapi.yaml --------------------------------------------------------

@pytest.fixture(scope="module")
def api():
    with open(os.path.join(DOCS, "asyncapi.yaml")) as f:
        return yaml.safe_load(f)


def resolve(api, schema):
    while "$ref" in schema:
        ref = schema["$ref"]
        assert ref.startswith("#/"), ref
        node = api
        for part in ref[2:].split("/"):
            node = node[part]
        schema = node
    return schema


ANNOTATIONS = {"description", "title", "examples", "x-bothy-status"}
FORMATS = {
    "uuid": r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    "date-time": r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})",
}
TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def valid(api, schema, v):
    """A small JSON Schema validator for exactly the keywords asyncapi.yaml
    uses; an unknown keyword fails, so a schema cannot say more than is
    checked here."""
    schema = resolve(api, schema)
    for key, want in schema.items():
        if key in ANNOTATIONS:
            continue
        if key == "type":
            ok = TYPES[want](v)
        elif key == "const":
            ok = v == want and type(v) is type(want)
        elif key == "enum":
            ok = v in want
        elif key == "oneOf":
            ok = sum(valid(api, s, v) for s in want) == 1
        elif key == "format":
            ok = not isinstance(v, str) or re.fullmatch(FORMATS[want], v) is not None
        elif key == "pattern":
            ok = not isinstance(v, str) or re.search(want, v) is not None
        elif key in ("minLength", "maxLength"):
            ok = not isinstance(v, str) or (len(v) >= want if key == "minLength" else len(v) <= want)
        elif key in ("minimum", "maximum"):
            ok = not TYPES["number"](v) or (v >= want if key == "minimum" else v <= want)
        elif key in ("minItems", "maxItems"):
            ok = not isinstance(v, list) or (len(v) >= want if key == "minItems" else len(v) <= want)
        elif key == "items":
            ok = not isinstance(v, list) or all(valid(api, want, e) for e in v)
        elif key == "required":
            ok = not isinstance(v, dict) or all(k in v for k in want)
        elif key == "properties":
            ok = not isinstance(v, dict) or all(valid(api, s, v[k]) for k, s in want.items() if k in v)
        elif key == "additionalProperties":
            extra = [k for k in v if k not in schema.get("properties", {})] if isinstance(v, dict) else []
            ok = all(valid(api, want, v[k]) for k in extra) if isinstance(want, dict) else (want or not extra)
        else:
            raise AssertionError("asyncapi.yaml uses %r, which this test does not check" % key)
        if not ok:
            return False
    return True


# --- links between the pages ----------------------------------------------------

def anchors(text):
    """GitHub's anchors of the headings of a Markdown text."""
    out = set()
    for line in text.splitlines():
        m = re.match(r"^#{1,6} (.*)$", line)
        if m:
            out.add(re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-"))
    return out


def links_resolve(page):
    """The links of docs/<page> to a page or a heading that does not exist:
    a relative link names a file of docs/, an anchor one of its headings."""
    broken = []
    for target, anchor in re.findall(r"\]\(([a-z0-9_.-]*)(?:#([^)]+))?\)", doc(page)):
        name = target or page
        if not os.path.isfile(os.path.join(DOCS, name)):
            broken.append(target)
        elif anchor and anchor not in anchors(doc(name)):
            broken.append("%s#%s" % (name, anchor))
    return broken
