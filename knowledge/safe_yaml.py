"""The one YAML loader for text a caller wrote: note-type schemas, imported and restored
frontmatter, the mirror's manifest.

PyYAML's safe loader still expands aliases: a 500-byte schema of nested `&a [..]` / `*a`
lists grew 6 to 10 times per level inside one C call that holds the GIL, and at 8 levels stopped
a web process. Deep nesting raises RecursionError in the constructor. So the text's events are
read first (the C parser, linear in the text) and any anchor, alias, excess depth or node count
is refused before anything is built.
"""

from __future__ import annotations

from typing import Any

import yaml

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_DEPTH = 32
MAX_NODES = 20_000
_OPEN = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_CLOSE = (yaml.SequenceEndEvent, yaml.MappingEndEvent)
_NODE = (yaml.ScalarEvent, *_OPEN)


class YamlRefused(yaml.YAMLError):
    """YAML that parses but is refused by its shape. `problem` says why, as the parse errors do."""

    problem_mark = None

    def __init__(self, problem: str):
        super().__init__(problem)
        self.problem = problem


def load_yaml(text: str, *, max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES) -> Any:
    """The value of one YAML document, built only after its shape passed. Raises yaml.YAMLError
    (YamlRefused for a refused shape)."""
    depth = nodes = 0
    for event in yaml.parse(text, Loader=_LOADER):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise YamlRefused(
                "anchors and aliases (&name, *name) are not accepted; write the values out"
            )
        if isinstance(event, _NODE):
            nodes += 1
            if nodes > max_nodes:
                raise YamlRefused(f"more than {max_nodes:,} values; split it up")
        if isinstance(event, _OPEN):
            depth += 1
            if depth > max_depth:
                raise YamlRefused(f"nested deeper than {max_depth} levels; flatten it")
        elif isinstance(event, _CLOSE):
            depth -= 1
    return yaml.load(text, Loader=_LOADER)
