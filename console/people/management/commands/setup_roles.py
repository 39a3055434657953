"""Create the four groups of the console and give each its model permissions (idempotent).

The ``admin`` role holds exactly what its pages need (the Django admin's pages for alert rules,
prices, retention classes, field policies, work notes, tool links, queues, service tokens and
review grants, and the console's People page) and opens ``/admin/`` without a staff flag
(``console/people/admin_site.py``).

Object-level access (which queues a group sees, which conversation a reviewer may review) is
granted separately, per object; these are the model-level permissions each role needs.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import Group, Permission
from django.core.management.base import BaseCommand
from django.db import transaction

from console.people.roles import ROLES


class Command(BaseCommand):
    help = "Create the groups support_agent, reviewer, compliance and admin with their permissions."

    @transaction.atomic
    def handle(self, *args: Any, **options: Any) -> None:
        for name, codenames in ROLES.items():
            group, created = Group.objects.get_or_create(name=name)
            perms = []
            for dotted in codenames:
                app_label, codename = dotted.split(".")
                perms.append(
                    Permission.objects.get(content_type__app_label=app_label, codename=codename)
                )
            group.permissions.set(perms)
            self.stdout.write(
                f"{'created' if created else 'updated'} group {name} ({len(perms)} permissions)"
            )
