"""The people app: a person behind each account (how they sign in, their directory identity),
directory groups and sessions; and the user names' key (console/people/names.py), the function
``console_username_key`` with an index on it.

The tables keep the names they had when the console app held these models. A database migrated
before the migrations were squashed has them from the console app's migrations and this one as
applied; the accounts whose names already shared a key were reported then: nobody is renamed, the
report names them for an administrator to resolve (rename or deactivate one), and from there on no
way of making or renaming an account can add another.
"""

from typing import Any

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

import console.people.models

KEY_FUNCTION = """
CREATE OR REPLACE FUNCTION console_username_key(name text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT normalize(
    replace(replace(lower(normalize(name, NFKC)), 'ß', 'ss'), 'ς', 'σ'), NFKC
) $$;
"""


def report_collisions(apps: Any, schema_editor: Any) -> None:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT array_agg(username ORDER BY username) FROM auth_user "
            "GROUP BY console_username_key(username) HAVING count(*) > 1 "
            "ORDER BY min(username)"
        )
        groups = [row[0] for row in cursor.fetchall()]
    if not groups:
        return
    lines = "\n".join(f"    {', '.join(repr(name) for name in group)}" for group in groups)
    print(
        f"\n  people.0001_initial: {len(groups)} group(s) of user names that differ only "
        f"by case or Unicode compatibility form (kept as they are; resolve each on the People "
        f"page or in the admin, by renaming or deactivating all but one):\n{lines}"
    )


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="DirectoryGroup",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "scim_id",
                    models.CharField(
                        default=console.people.models.new_scim_id, max_length=64, unique=True
                    ),
                ),
                ("display_name", models.CharField(max_length=255, unique=True)),
                ("external_id", models.CharField(blank=True, max_length=255)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "members",
                    models.ManyToManyField(
                        blank=True, related_name="directory_groups", to=settings.AUTH_USER_MODEL
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
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
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
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
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
                        default=console.people.models.new_scim_id, max_length=64, unique=True
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
                    ("manage_people", "Can invite people, change their roles and deactivate")
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
        migrations.RunSQL(KEY_FUNCTION, "DROP FUNCTION IF EXISTS console_username_key(text)"),
        migrations.RunSQL(
            "CREATE INDEX IF NOT EXISTS console_username_key_idx "
            "ON auth_user (console_username_key(username))",
            "DROP INDEX IF EXISTS console_username_key_idx",
        ),
        migrations.RunPython(report_collisions, migrations.RunPython.noop, elidable=True),
    ]
