"""ninja In/Out schemas by resource (the MCP tools return the same field names); fields holds
the bounded, NUL-refusing string types every schema uses."""
