"""The knowledge graph: observations and relations parsed from entries' Markdown (parsing, pure),
indexed by the write kernel, read through graph.selectors (build_context, graph_data, …)."""
