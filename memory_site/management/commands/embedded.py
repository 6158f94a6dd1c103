from django.core.management.base import BaseCommand

from memory_site import embedded


class Command(BaseCommand):
    help = "Show or stop the embedded PostgreSQL and Valkey broker that live under var/."

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["status", "stop"])

    def handle(self, *args, action, **options):
        if action == "stop":
            embedded.stop_broker()
            embedded.stop_postgres()
        pg = "running" if embedded.postgres_running() else "stopped"
        broker = "running" if embedded.broker_running() else "stopped"
        self.stdout.write(f"PostgreSQL {pg:8} {embedded.PG_DIR}")
        self.stdout.write(f"broker     {broker:8} {embedded.BROKER_SOCKET}")
