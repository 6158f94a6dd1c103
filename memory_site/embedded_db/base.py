"""Django's PostgreSQL backend, starting the embedded server before it first connects.

Settings name this backend instead of starting the server themselves, so importing them (a
check, `manage.py embedded status`, a tool that only reads a setting) starts nothing.
"""

from django.db.backends.postgresql import base, client

from memory_site import embedded


class DatabaseClient(client.DatabaseClient):
    def runshell(self, parameters):
        # dbshell connects through psql, not through the wrapper.
        embedded.ensure_started(self.connection.settings_dict)
        super().runshell(parameters)


class DatabaseWrapper(base.DatabaseWrapper):
    client_class = DatabaseClient

    def get_connection_params(self):
        embedded.ensure_started(self.settings_dict)
        return super().get_connection_params()
