"""`make mutants`: mutation testing of the core's guarantees with mutmut (pyproject.toml
[tool.mutmut]; docs/developers/mutants.md says how to read and keep it)."""
