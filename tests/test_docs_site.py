"""The documentation site works opened from disk, with no network: every page loads its scripts,
styles and pictures from the site itself, search reads an index inlined into a script (Material's
offline plugin) through a vendored Web Worker shim, and the diagram script loads only where there
is a diagram. The site publishes no Python of docs/. (tests/web/test_docs_offline.py opens it in
Chromium.)"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from tests.docs_site import build


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    return build(tmp_path_factory.mktemp("site"))


class _Assets(HTMLParser):
    """What a page makes the browser fetch: scripts, stylesheets, pictures, frames."""

    def __init__(self):
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("script", "img", "iframe", "source", "video", "audio") and a.get("src"):
            self.urls.append(a["src"])
        if tag == "link" and a.get("href") and a.get("rel") in ("stylesheet", "preload", "icon"):
            self.urls.append(a["href"])


REMOTE = re.compile(r"^(https?:)?//", re.I)


def test_no_page_loads_anything_from_another_host(site):
    remote = []
    for page in site.rglob("*.html"):
        parser = _Assets()
        parser.feed(page.read_text())
        remote += [f"{page.relative_to(site)}: {url}" for url in parser.urls if REMOTE.match(url)]
    for sheet in site.rglob("*.css"):
        remote += [
            f"{sheet.relative_to(site)}: {u}"
            for u in re.findall(r"url\((https?:[^)]+)\)", sheet.read_text())
        ]
    assert not remote, "Pages that need the network when opened from disk:\n" + "\n".join(remote)


def test_search_reads_an_inlined_index_through_the_vendored_worker_shim(site):
    index = (site / "search" / "search_index.js").read_text()
    assert index.startswith("var __index = {") and '"location":"operators/mirror.html"' in index
    home = (site / "index.html").read_text()
    assert '<script src="assets/vendor/iframe-worker/iframe-worker-shim-1.0.4.js">' in home
    assert (site / "assets/vendor/iframe-worker/iframe-worker-shim-1.0.4.js").exists()


def test_the_diagram_script_loads_only_where_there_is_a_diagram(site):
    script = "assets/vendor/mermaid/mermaid-11.12.0.min.js"
    with_diagram = (site / "developers/write-path.html").read_text()
    assert '<pre class="mermaid">' in with_diagram and f'src="../{script}"' in with_diagram
    assert "mermaid" not in (site / "index.html").read_text().lower()
    assert (site / script).exists()


def test_the_site_publishes_no_python_of_docs_and_llms_txt_at_its_root(site):
    assert not list(site.rglob("*.py")), "docs/*.py are tools, not pages: exclude_docs them"
    assert not (site / "overrides").exists()
    assert (site / "llms.txt").read_text().startswith("# Cairn\n\n> ")
