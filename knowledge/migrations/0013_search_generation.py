from django.db import migrations


class Migration(migrations.Migration):
    """The generation of the stored data that kept search answers belong to
    (knowledge/search/result_cache.py): advanced after every commit that can change one."""

    dependencies = [("knowledge", "0012_api_token_names")]

    operations = [
        migrations.RunSQL(
            "CREATE SEQUENCE IF NOT EXISTS knowledge_search_generation",
            "DROP SEQUENCE IF EXISTS knowledge_search_generation",
        )
    ]
