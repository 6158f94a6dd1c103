"""Admin for personal API tokens (imported by knowledge/admin.py)."""
