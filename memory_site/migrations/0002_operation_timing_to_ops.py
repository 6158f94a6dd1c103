"""OperationTiming now belongs to ops (ops 0001 took over its state and its table): forget it
here in the state only, so the table and its rows stay."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("site", "0001_operation_timing"), ("ops", "0001_initial")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="OperationTiming")],
            database_operations=[],
        ),
    ]
