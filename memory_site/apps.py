from django.apps import AppConfig


class SiteConfig(AppConfig):
    """The site itself as an app: its own commands (serve, embedded, createadmin, metrics,
    search, backup, restore). What ops must not import (the memory's size and state) it names
    in the settings (CAIRN_OPS_*)."""

    name = "memory_site"
    label = "site"
    verbose_name = "Cairn site"
