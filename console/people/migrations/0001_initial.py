"""The people app takes its models over from the console app: state only, under the same tables."""

from typing import Any

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

import console.people.models

MODELS = ("person", "directorygroup", "personsession")


def move_content_types(apps: Any, schema_editor: Any) -> None:
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label="console", model__in=MODELS).update(app_label="people")


def keep_content_types(apps: Any, schema_editor: Any) -> None:
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label="people", model__in=MODELS).update(app_label="console")


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("console", "0003_username_key"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            # The tables exist (console 0002): only their content types move, so the permission
            # manage_people and its grants follow the model (people.manage_people).
            database_operations=[
                migrations.RunPython(move_content_types, keep_content_types),
            ],
            state_operations=[
                migrations.CreateModel(
                    name="DirectoryGroup",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        (
                            "scim_id",
                            models.CharField(
                                default=console.people.models.new_scim_id,
                                max_length=64,
                                unique=True,
                            ),
                        ),
                        ("display_name", models.CharField(max_length=255, unique=True)),
                        ("external_id", models.CharField(blank=True, max_length=255)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        (
                            "members",
                            models.ManyToManyField(
                                blank=True,
                                related_name="directory_groups",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "console_directorygroup",
                        "ordering": ["display_name"],
                    },
                ),
                migrations.CreateModel(
                    name="PersonSession",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("session_key", models.CharField(max_length=64, unique=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "user",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="console_sessions",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "console_personsession",
                    },
                ),
                migrations.CreateModel(
                    name="Person",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        (
                            "source",
                            models.CharField(
                                choices=[
                                    ("local", "local password"),
                                    ("provider", "single sign-on"),
                                    ("scim", "SCIM"),
                                ],
                                default="local",
                                max_length=16,
                            ),
                        ),
                        ("oidc_issuer", models.CharField(blank=True, max_length=500)),
                        ("oidc_subject", models.CharField(blank=True, max_length=255)),
                        (
                            "scim_id",
                            models.CharField(
                                default=console.people.models.new_scim_id,
                                max_length=64,
                                unique=True,
                            ),
                        ),
                        ("external_id", models.CharField(blank=True, max_length=255)),
                        ("attributes", models.JSONField(blank=True, default=dict)),
                        ("in_directory", models.BooleanField(default=False)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        ("deactivated_at", models.DateTimeField(blank=True, null=True)),
                        ("deleted_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "invited_by",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "user",
                            models.OneToOneField(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="person",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "console_person",
                        "permissions": [
                            (
                                "manage_people",
                                "Can invite people, change their roles and deactivate",
                            )
                        ],
                        "constraints": [
                            models.UniqueConstraint(
                                condition=models.Q(("oidc_subject", ""), _negated=True),
                                fields=("oidc_issuer", "oidc_subject"),
                                name="person_unique_subject",
                            )
                        ],
                    },
                ),
            ],
        ),
    ]
