"""memory_site.settings gathers its modules with star imports: a name two of them define would
quietly take the value of whichever comes last, so each setting lives in one module."""

import ast
from collections import Counter
from pathlib import Path

import memory_site.settings

SETTINGS_DIR = Path(memory_site.settings.__file__).parent


def _assigned_settings(path: Path) -> set[str]:
    names = set()
    for node in ast.parse(path.read_text()).body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        names |= {
            t.id for t in targets if isinstance(t, ast.Name) and t.id.isupper() and t.id[0] != "_"
        }
    return names


def test_each_setting_is_defined_in_one_settings_module():
    counts = Counter(
        name for path in SETTINGS_DIR.glob("*.py") for name in _assigned_settings(path)
    )
    assert [name for name, n in counts.items() if n > 1] == []


def test_the_site_settings_offer_every_module_setting():
    names = {name for path in SETTINGS_DIR.glob("*.py") for name in _assigned_settings(path)}
    missing = sorted(n for n in names if not hasattr(memory_site.settings, n))
    assert missing == []
