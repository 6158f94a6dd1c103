"""One ninja Router per resource; api.site mounts them all under /api/v1."""
