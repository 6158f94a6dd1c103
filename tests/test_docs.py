"""The documentation cannot drift from the code: the reference pages under docs/reference/ are
what docs/generate.py makes of the code now (MCP server, OpenAPI schema, settings modules,
management commands), every setting has its line, and the README stays a two-minute read whose
links lead somewhere."""

import importlib.util
import re
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "docs" / "reference"
REGENERATE = "Run `make docs-reference` and commit docs/reference/ and docs/llms.txt."


def _generator():
    spec = importlib.util.spec_from_file_location("docs_generate", ROOT / "docs" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generate = _generator()


@pytest.mark.parametrize("page", sorted(generate.PAGES))
def test_reference_page_matches_the_code(page):
    path = ROOT / "docs" / page
    assert path.exists(), f"docs/{page} is missing. {REGENERATE}"
    fresh = generate.PAGES[page]()
    if path.read_text() != fresh:
        old, new = path.read_text().splitlines(), fresh.splitlines()
        first = next(
            (i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b),
            min(len(old), len(new)),
        )
        line = new[first] if first < len(new) else "(the generated page ends here)"
        pytest.fail(
            f"docs/{page} differs from what the code produces, from line {first + 1}:"
            f"\n  the code now says: {line[:200]}\n{REGENERATE}"
        )


def _lines_for(page: str, name: str) -> list[str]:
    return [line for line in page.splitlines() if line.startswith("|") and f"`{name}`" in line]


def test_every_setting_and_variable_has_a_line_with_default_and_description():
    page = (REFERENCE / "settings.md").read_text()
    missing = []
    for row in generate.settings_rows():
        for name in [n for n in row["settings"] if n.startswith("CAIRN_")] + [
            var for var, _ in row["reads"]
        ]:
            lines = _lines_for(page, name)
            defaults = [d for var, d in row["reads"] if var == name and d is not None]
            default = defaults[0] if defaults else row["value"]
            has_default = not default or any(generate.code(default) in x for x in lines)
            described = generate.cell(row["description"])
            has_description = not described or any(described in x for x in lines)
            if not (lines and has_default and has_description):
                missing.append(name)
    missing = list(dict.fromkeys(missing))
    assert not missing, f"No line (or an old one) in docs/reference/settings.md for {missing}. " + (
        REGENERATE
    )


def test_every_setting_says_what_it_is():
    """The settings page takes each description from the comment above the setting (or above
    its group of lines): a setting without one would be a bare name in the docs."""
    bare = [
        f"{row['settings'][0]} (memory_site/settings/{row['module']})"
        for row in generate.settings_rows()
        if not row["description"]
    ]
    assert not bare, (
        f"No comment above {', '.join(bare)}: write one line above it saying what it is for, "
        f"then {REGENERATE[0].lower()}{REGENERATE[1:]}"
    )


def test_a_new_setting_is_caught(tmp_path, monkeypatch):
    """The check above can fail: a setting added to a settings module is not in the committed
    page until it is regenerated, and then gets its default and its comment."""
    reader = sys.modules[generate.settings_page.__module__]  # docs/settings_reference.py
    settings_dir = tmp_path / "settings"
    shutil.copytree(reader.SETTINGS_DIR, settings_dir)
    with (settings_dir / "cairn.py").open("a") as f:
        f.write(
            "\n# How many pebbles a new knob holds.\n"
            'CAIRN_NEW_KNOB = env.int("CAIRN_NEW_KNOB", default=7)\n'
        )
    monkeypatch.setattr(reader, "SETTINGS_DIR", settings_dir)
    page = generate.settings_page()
    assert page != (REFERENCE / "settings.md").read_text()
    [line] = _lines_for(page, "CAIRN_NEW_KNOB")
    assert "`7`" in line and "How many pebbles a new knob holds." in line
    assert not _lines_for((REFERENCE / "settings.md").read_text(), "CAIRN_NEW_KNOB")


def test_every_command_tool_and_endpoint_is_in_the_reference():
    from django.core.management import get_commands

    from api.site import api

    commands = (REFERENCE / "commands.md").read_text()
    for name, app in get_commands().items():
        if app in generate.COMMAND_APPS:
            assert f"\n### {name}\n" in commands, f"{name} is not in commands.md. {REGENERATE}"
    rest = (REFERENCE / "rest.md").read_text()
    for path, methods in api.get_openapi_schema()["paths"].items():
        for method in methods:
            assert f"`{method.upper()} {path}`" in rest, f"{method} {path}: {REGENERATE}"
    mcp = (REFERENCE / "mcp.md").read_text()
    from mcp_api.tools import TOOLS

    for tool in TOOLS:
        assert f"\n### {tool.name}\n" in mcp, f"MCP tool {tool.name}: {REGENERATE}"


def test_the_readme_is_short_and_its_links_lead_somewhere():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 250, "The README is a two-minute read: move detail to docs/."
    for target in re.findall(r"\]\(((?!https?:|#|mailto:)[^)\s]+)\)", readme):
        path = ROOT / target.split("#")[0]
        assert path.exists(), f"README links to {target}, which does not exist."


def test_every_screenshot_is_shown_and_every_shown_one_exists():
    """docs/screenshots/ holds only what the README and the guides show (the browser tests take
    no other: tests/web/browser.py), and every picture they show is there."""
    shown = {
        m
        for p in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]
        for m in re.findall(r"screenshots/([\w.-]+\.png)", p.read_text())
    }
    files = {p.name for p in (ROOT / "docs" / "screenshots").glob("*")}
    assert not files - shown, f"Pictures no guide shows: {sorted(files - shown)}. Remove them."
    assert not shown - files, (
        f"Pictures the guides show that are missing: {sorted(shown - files)}. "
        "Take them with CAIRN_UPDATE_SCREENSHOTS=1 make test."
    )


def test_a_phone_picture_is_no_wider_than_the_phone():
    for path in (ROOT / "docs" / "screenshots").glob("*phone*.png"):
        width = int.from_bytes(path.read_bytes()[16:20], "big")  # the PNG header's IHDR width
        assert width <= 390, f"{path.name} is {width} px wide, wider than the phone (390 px)"
