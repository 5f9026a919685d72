"""The release's facts, each checked against its one place: the version
(bothy.control's default_version) in debian/changelog, META.json, the
Compose files' default image tags and CHANGELOG.md; the licence (LICENSE)
in debian/copyright (DEP-5), META.json and README.md.  No docker needed;
the images' labels are checked on the running images (test_compose.py)."""
import json
import os
import re

from conftest import ROOT, VERSION


def read(path):
    with open(os.path.join(ROOT, path)) as f:
        return f.read()


def control(key):
    return re.search(r"^%s = '(.*)'$" % key, read("bothy.control"), re.M).group(1)


def test_one_version_everywhere():
    assert VERSION == control("default_version")
    assert re.match(r"bothy \(([^)]+)\)", read("debian/changelog")).group(1) == VERSION
    meta = json.loads(read("META.json"))
    assert meta["version"] == VERSION and meta["provides"]["bothy"]["version"] == VERSION
    assert meta["provides"]["bothy"]["file"] == "bothy--%s.sql" % VERSION
    tags = re.findall(r"\$\{BOTHY_VERSION:-([^}]*)\}", read("compose/compose.yaml") + read("compose/node.yaml"))
    assert tags and set(tags) == {VERSION}, tags
    # the newest section of the changelog is the current version
    assert re.findall(r"^## (\S+)", read("CHANGELOG.md"), re.M)[:3] == [VERSION, "0.2.0", "0.1.0"]


def test_meta_json_is_pgxns():
    meta = json.loads(read("META.json"))
    assert meta["name"] == "bothy" and meta["license"] == "postgresql"
    assert meta["abstract"] == control("comment") == meta["provides"]["bothy"]["abstract"]
    assert meta["meta-spec"]["version"] == "1.0.0"
    for field in ("maintainer", "release_status", "prereqs"):
        assert meta[field], field


def test_the_postgresql_licence_everywhere():
    licence = read("LICENSE")
    assert licence.startswith("PostgreSQL Licence\n\nCopyright (c) 2026, the bothy developers\n")
    # DEP-5: the Files paragraph names the licence, a standalone License
    # paragraph carries its text (one space in, "." for an empty line)
    paragraphs = read("debian/copyright").split("\n\n")
    assert paragraphs[0].startswith("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/")
    files = [p for p in paragraphs if p.startswith("Files: *\n")]
    assert len(files) == 1 and "\nLicense: PostgreSQL" in files[0]
    (standalone,) = [p for p in paragraphs if p.startswith("License: PostgreSQL\n")]
    text = "\n".join("" if l == " ." else l[1:] for l in standalone.rstrip("\n").split("\n")[1:])
    assert text + "\n" == licence.split("\n", 2)[2]
    readme = read("README.md")
    assert "PostgreSQL Licence" in readme and "(LICENSE)" in readme
