"""Django's PostgreSQL backend for the embedded server, which it starts on the first connection."""
