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

ROLES: dict[str, list[str]] = {
    "support_agent": ["conversations.view_conversation"],
    "reviewer": ["conversations.view_conversation"],
    # Compliance reads review grants and alerts (who may read reasoning, who read unusually much).
    "compliance": [
        "audit.view_auditevent",
        "conversations.view_reviewgrant",
        "conversations.view_reviewalert",
        "conversations.view_sharelink",
    ],
    "admin": [
        "conversations.view_conversation",
        "conversations.view_exchange",
        "conversations.view_block",
        "conversations.view_unknownblocktype",
        "conversations.view_restricted_fields",
        "conversations.view_fieldpolicy",
        "conversations.add_fieldpolicy",
        "conversations.change_fieldpolicy",
        "conversations.delete_fieldpolicy",
        "conversations.view_toollink",
        "conversations.add_toollink",
        "conversations.change_toollink",
        "conversations.delete_toollink",
        # Work notes (sharing/notes.py): saved through work_note_save, audited.
        "conversations.view_worknote",
        "conversations.add_worknote",
        "conversations.change_worknote",
        "conversations.delete_worknote",
        "conversations.view_sharelink",
        "conversations.view_reprojectionjob",
        "conversations.view_queue",
        "conversations.add_queue",
        "conversations.change_queue",
        "audit.view_auditevent",
        "conversations.view_servicetoken",
        "conversations.change_servicetoken",
        # Review grants: given and revoked (the admin's action) through reviews.py, audited.
        "conversations.view_reviewgrant",
        "conversations.add_reviewgrant",
        "conversations.change_reviewgrant",
        "conversations.view_reviewalert",
        # Alert rules and the price table (signals): saved through rule_save and
        # model_price_save, audited; the alerts and allowance probes are read-only pages.
        "conversations.view_alertrule",
        "conversations.add_alertrule",
        "conversations.change_alertrule",
        "conversations.delete_alertrule",
        "conversations.view_modelprice",
        "conversations.add_modelprice",
        "conversations.change_modelprice",
        "conversations.delete_modelprice",
        "conversations.view_alert",
        "conversations.view_notification",
        "conversations.view_allowanceprobe",
        # Retention classes: how long conversations are kept (retention_class_save, audited).
        "retention.view_retentionclass",
        "retention.add_retentionclass",
        "retention.change_retentionclass",
        "retention.delete_retentionclass",
        # The People page (console/people/): invite, roles, queue grants, deactivation.
        "console.manage_people",
    ],
}


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
