"""The retention app's tables as its four earlier migrations left them (squashed): legal holds,
deletion requests, their receipts and tombstones, retention classes.

A database migrated through the four earlier migrations has this one as applied.
"""

import django.contrib.postgres.fields
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    replaces = [
        ("retention", "0001_initial"),
        ("retention", "0002_requester_reference_labels"),
        ("retention", "0003_hold_subject_and_plural"),
        ("retention", "0005_receipt_backup_horizon"),
    ]

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="LegalHold",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "scope",
                    models.CharField(
                        choices=[
                            ("subject", "a customer"),
                            ("conversation", "one conversation"),
                            ("queue", "a queue"),
                        ],
                        max_length=20,
                    ),
                ),
                (
                    "subject",
                    models.CharField(
                        blank=True,
                        help_text="raw customer id, cleared when the customer is erased",
                        max_length=200,
                    ),
                ),
                ("subject_hash", models.CharField(blank=True, db_index=True, max_length=64)),
                (
                    "conversation_id",
                    models.BigIntegerField(blank=True, help_text="internal id", null=True),
                ),
                ("queue", models.CharField(blank=True, max_length=100)),
                ("reason", models.CharField(max_length=300)),
                ("placed_by_label", models.CharField(blank=True, max_length=200)),
                ("placed_at", models.DateTimeField(auto_now_add=True)),
                ("released_by_label", models.CharField(blank=True, max_length=200)),
                ("released_at", models.DateTimeField(blank=True, null=True)),
                ("release_reason", models.CharField(blank=True, max_length=300)),
                (
                    "placed_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "released_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["-placed_at"],
            },
        ),
        migrations.CreateModel(
            name="DeletionRequest",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "scope",
                    models.CharField(
                        choices=[
                            ("customer", "a customer (data subject) and all their conversations"),
                            ("conversations", "named conversations"),
                            ("retention", "conversations past their retention (the clock)"),
                        ],
                        max_length=20,
                    ),
                ),
                (
                    "subject",
                    models.CharField(
                        blank=True, help_text="raw customer id, cleared", max_length=200
                    ),
                ),
                (
                    "conversation_external_ids",
                    models.JSONField(
                        blank=True,
                        default=list,
                        help_text="raw conversation ids, cleared on completion",
                    ),
                ),
                ("subject_hash", models.CharField(blank=True, db_index=True, max_length=64)),
                (
                    "conversation_ids",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.BigIntegerField(),
                        blank=True,
                        default=list,
                        help_text="internal ids",
                        size=None,
                    ),
                ),
                ("reason", models.CharField(max_length=300)),
                (
                    "reference",
                    models.CharField(
                        blank=True,
                        help_text="the requester's reference (a ticket id); one request per reference",
                        max_length=100,
                    ),
                ),
                ("request_hash", models.CharField(blank=True, max_length=64)),
                (
                    "requester",
                    models.CharField(
                        blank=True,
                        help_text="who submitted it: a user or a service token",
                        max_length=200,
                    ),
                ),
                ("requested_at", models.DateTimeField(auto_now_add=True)),
                ("due", models.DateTimeField(db_index=True)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("pending", "Pending"),
                            ("running", "Running"),
                            ("completed", "Completed"),
                            ("blocked", "Blocked"),
                            ("failed", "Failed"),
                        ],
                        db_index=True,
                        default="pending",
                        max_length=20,
                    ),
                ),
                (
                    "preview",
                    models.JSONField(
                        blank=True, default=dict, help_text="rows per model at submission"
                    ),
                ),
                ("claimed_at", models.DateTimeField(blank=True, null=True)),
                ("claim_token", models.CharField(blank=True, max_length=32)),
                (
                    "attempts",
                    models.PositiveSmallIntegerField(
                        default=0, help_text="claims so far; failed after RETENTION_MAX_ATTEMPTS"
                    ),
                ),
                ("counts", models.JSONField(blank=True, default=dict)),
                ("conversations_erased", models.PositiveIntegerField(default=0)),
                ("blocked_reason", models.CharField(blank=True, max_length=300)),
                ("error", models.TextField(blank=True)),
                ("completed_at", models.DateTimeField(blank=True, null=True)),
                (
                    "requested_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "blocked_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="retention.legalhold",
                    ),
                ),
            ],
            options={
                "ordering": ["-requested_at"],
            },
        ),
        migrations.CreateModel(
            name="Receipt",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("subject_hash", models.CharField(blank=True, max_length=64)),
                ("conversations", models.PositiveIntegerField()),
                ("counts", models.JSONField(help_text="rows removed, per store and model")),
                ("keys_destroyed", models.PositiveIntegerField()),
                ("verification", models.JSONField()),
                ("issued_at", models.DateTimeField()),
                (
                    "backup_horizon",
                    models.DateTimeField(
                        blank=True,
                        help_text="after this, no backup can restore the erased data",
                        null=True,
                    ),
                ),
                ("hmac", models.CharField(max_length=64)),
                (
                    "request",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="receipt",
                        to="retention.deletionrequest",
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="RetentionClass",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("queue", models.CharField(blank=True, max_length=100)),
                (
                    "conversation_id",
                    models.BigIntegerField(blank=True, help_text="internal id", null=True),
                ),
                ("days", models.PositiveIntegerField()),
                ("updated_at", models.DateTimeField(auto_now=True)),
            ],
            options={
                "verbose_name_plural": "retention classes",
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(
                            models.Q(("queue", ""), ("conversation_id__isnull", False)),
                            models.Q(
                                models.Q(("queue", ""), _negated=True),
                                ("conversation_id__isnull", True),
                            ),
                            _connector="OR",
                        ),
                        name="retention_class_one_target",
                    ),
                    models.UniqueConstraint(
                        condition=models.Q(("queue", ""), _negated=True),
                        fields=("queue",),
                        name="retention_class_queue_uniq",
                    ),
                    models.UniqueConstraint(
                        condition=models.Q(("conversation_id__isnull", False)),
                        fields=("conversation_id",),
                        name="retention_class_conversation_uniq",
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="Tombstone",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "kind",
                    models.CharField(
                        choices=[("conversation", "Conversation"), ("customer", "Customer")],
                        max_length=20,
                    ),
                ),
                ("key_hash", models.CharField(max_length=64)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("refused_count", models.PositiveIntegerField(default=0)),
                ("last_refused_at", models.DateTimeField(blank=True, null=True)),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(fields=("kind", "key_hash"), name="tombstone_uniq")
                ],
            },
        ),
        migrations.AddConstraint(
            model_name="deletionrequest",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("status", "completed"), _negated=True),
                    models.Q(("subject", ""), ("conversation_external_ids", [])),
                    _connector="OR",
                ),
                name="deletion_completed_keeps_no_raw_id",
            ),
        ),
        migrations.AddConstraint(
            model_name="deletionrequest",
            constraint=models.UniqueConstraint(
                condition=models.Q(("reference", ""), _negated=True),
                fields=("reference",),
                name="deletion_reference_uniq",
            ),
        ),
    ]
