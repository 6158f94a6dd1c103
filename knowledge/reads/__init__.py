"""Reads shaped for one caller: a page, the editor, whoami, a write's report, a stale write's
conflict, listings, trees, health, note-type reports, build_context. They stand on the entity
reads (knowledge.selectors), search, the graph and the note-type reads; nothing below imports
them, and each module here has one kind of caller."""
