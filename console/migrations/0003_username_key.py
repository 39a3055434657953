"""The user names' key (console/people/names.py): the function ``console_username_key`` and an
index on it, then a report of the accounts whose names already share a key. Nobody is renamed:
the report names them for an administrator to resolve (rename or deactivate one), and from here
on no way of making or renaming an account can add another."""

from typing import Any

from django.db import migrations

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
        f"\n  console.0003_username_key: {len(groups)} group(s) of user names that differ only "
        f"by case or Unicode compatibility form (kept as they are; resolve each on the People "
        f"page or in the admin, by renaming or deactivating all but one):\n{lines}"
    )


class Migration(migrations.Migration):
    dependencies = [
        ("console", "0002_people"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [
        migrations.RunSQL(KEY_FUNCTION, "DROP FUNCTION IF EXISTS console_username_key(text)"),
        migrations.RunSQL(
            "CREATE INDEX IF NOT EXISTS console_username_key_idx "
            "ON auth_user (console_username_key(username))",
            "DROP INDEX IF EXISTS console_username_key_idx",
        ),
        migrations.RunPython(report_collisions, migrations.RunPython.noop, elidable=True),
    ]
