"""The Django admin under the console's own site class (``admin_site.ConsoleAdminSite``): listed
in INSTALLED_APPS in place of ``django.contrib.admin``. A module apart, imported before the models
exist: it names the site by path only."""

from __future__ import annotations

from django.contrib.admin.apps import AdminConfig


class ConsoleAdminConfig(AdminConfig):
    default_site = "console.people.admin_site.ConsoleAdminSite"
