"""The people domain, a Django app of its own (label ``people``): who may enter, where each account
comes from, the directory's groups, the roles and the sessions a deactivation ends. Its tables
keep the names they had when the console app held them (``console_person``...)."""

from __future__ import annotations

from django.apps import AppConfig


class PeopleConfig(AppConfig):
    name = "console.people"
    label = "people"
    verbose_name = "People"
    default_auto_field = "django.db.models.BigAutoField"
