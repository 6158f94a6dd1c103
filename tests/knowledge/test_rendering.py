"""Rendering bodies for people: linear in the input, bounded, and unable to dress up as the page
(its classes and ids) or to make a reader's browser call another host."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from knowledge.rendering import TOO_LARGE_NOTE, render_markdown, render_page_markdown

ROOT = Path(__file__).resolve().parents[2]

# Shapes that made Python-Markdown quadratic (4,000 `![` took 6.8 s), plus deep nesting, which
# makes the sanitiser's HTML parser quadratic (40,000 `>` took 19 s).
ADVERSARIAL = ["[", "![", "[](", "[a", "*a", "_a", "<", "&#", "```py\nx\n```\n", "# a\n", ">"]
# The renderer alone, with the bounds out of the way: a guard must not be what keeps it fast.
_TIMED = """
import json, sys, time
from django.conf import settings
settings.configure(CAIRN_RENDER_MAX_BYTES=10**9, CAIRN_RENDER_MAX_LINE_CHARS=10**9,
                   CAIRN_RENDER_REMOTE_IMAGES=False)
import django; django.setup()
from knowledge.rendering import render_page_markdown
shape, sizes = json.loads(sys.argv[1])
took = []
for size in sizes:
    text = (shape * size)[:size]
    start = time.perf_counter()
    render_page_markdown(text)
    took.append(time.perf_counter() - start)
print(json.dumps(took))
"""


@pytest.mark.parametrize("shape", ADVERSARIAL)
def test_adversarial_shapes_render_in_linear_time(shape):
    # A child process, so a regression fails this test after 20 s instead of hanging the suite.
    try:
        done = subprocess.run(
            [sys.executable, "-c", _TIMED, json.dumps([shape, [25_000, 100_000]])],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=20,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"100,000 characters of {shape!r} took over 20 s to render")
    assert done.returncode == 0, done.stderr
    small, large = json.loads(done.stdout)
    # Four times the text: about four times the time when linear, sixteen when quadratic. A
    # ratio, not a wall-clock bound, so a busy machine (two test workers on two cores) does
    # not fail it; the absolute bound only catches what is slow at any size.
    assert large < 10 * small + 0.2, f"{shape!r}: 25,000 chars {small:.3f} s, 100,000 {large:.3f} s"
    assert large < 5.0, f"{shape!r}: {large:.2f} s for 100,000 characters"


def test_a_body_past_the_bounds_is_escaped_plain_text_with_a_note(settings):
    settings.CAIRN_RENDER_MAX_BYTES = 1_000
    settings.CAIRN_RENDER_MAX_LINE_CHARS = 100
    for body in ("# Big\n<b>x</b>\n" + "word " * 300, "# Long\n" + "<b>x</b>" * 20):
        html = render_page_markdown(body)
        assert TOO_LARGE_NOTE in html
        assert "<pre>" in html and "&lt;b&gt;x&lt;/b&gt;" in html and "<b>" not in html
        assert "<h1" not in html
        assert TOO_LARGE_NOTE in render_markdown(body)  # the admin's preview, too
    assert TOO_LARGE_NOTE not in render_page_markdown("# Small\n" + "word " * 10)


def test_deep_nesting_is_plain_text_too():
    html = render_page_markdown("<div>" * 5_000 + "\n\n" + ">" * 5_000 + " x")
    assert TOO_LARGE_NOTE in html and "<div>" not in html


def test_a_body_cannot_take_the_pages_classes_or_ids():
    body = (
        "# History\n\n## Observations\n\n"
        '<span class="copy" id="memory-url">x</span> <div class="verified badge">v</div>\n\n'
        '<button class="copy-button" data-copy="#memory-url">Copy</button>\n\n'
        "A paragraph {: .verified #history}\n\n"
        '<h2 id="backlinks" class="crumbs">Raw heading</h2>\n\n'
        '<span class="k">not code</span>\n'
    )
    for html in (render_page_markdown(body), render_markdown(body)):
        for name in ("history", "observations", "memory-url", "backlinks"):
            assert f'id="{name}"' not in html
        assert 'class="' not in html, html
        assert 'id="md-history"' in html and 'id="md-observations"' in html
        assert 'id="md-raw-heading"' in html
        assert "{: .verified #history}" in html  # no attribute syntax: it stays text


def test_the_renderer_keeps_its_own_classes():
    body = "```python\ndef answer():\n    return 42\n```\n\n- [ ] open\n- [x] done\n"
    html = render_page_markdown(body)
    assert '<div class="highlight">' in html and '<span class="k">def</span>' in html
    assert '<li class="task"><input type="checkbox" disabled="">' in html
    assert '<input type="checkbox" disabled="" checked="">' in html


def test_code_highlighting_has_a_budget():
    big = "x = 1\n" * 20_000
    html = render_page_markdown(f"```python\n{big}```\n\n```python\nsmall = 2\n```\n")
    assert html.count('class="highlight"') == 1  # the small one; the big one is plain code
    assert "<pre><code>x = 1\n" in html


def test_an_author_input_is_only_a_disabled_check_box():
    html = render_page_markdown('<input type="password" name="pw" value="x">')
    assert html.strip() == '<input type="checkbox" disabled="">'


def test_remote_images_become_links_unless_allowed(settings):
    body = (
        '![chart](https://tracker.example/pixel.png "t") ![local](/static/web/logo.png)\n'
        '![rel](img/x.png) ![proto](//tracker.example/p.png) <img src="http://e.example/r.png">\n'
        '<img src="/\\tracker.example/q.png" alt="slash">\n'
    )
    html = render_page_markdown(body)
    assert "tracker.example" in html and "e.example" in html  # as links the reader may follow
    assert html.count("<img") == 2
    assert '<img src="/static/web/logo.png" alt="local">' in html
    assert '<img src="img/x.png" alt="rel">' in html
    assert (
        '<a href="https://tracker.example/pixel.png" rel="noopener noreferrer nofollow">chart'
        in html
    )
    settings.CAIRN_RENDER_REMOTE_IMAGES = True
    assert render_page_markdown(body).count("<img") == 6


def test_scripts_and_unsafe_links_are_still_removed():
    html = render_page_markdown(
        '<script>alert("x")</script><img src="javascript:alert(1)" onerror="alert(2)">\n\n'
        "[a](javascript:alert(3)) <a href='data:text/html,x'>d</a>"
    )
    assert "script" not in html and "onerror" not in html and "javascript:" not in html
    assert "data:" not in html
