"""The knowledge graph: observations and relations parsed from entries' Markdown (parsing, pure),
indexed by the write kernel, read through graph.selectors (relations, graph_data, …) and
knowledge.reads.context (build_context)."""
