"""The audit log is sealed off the request path (audit/sealer.py): rows are appended unchained,
the sealer chains committed rows into ``audit_auditseal`` and signs each batch in
``audit_auditdigest``.

Rows written before this migration lose their old inline chain (``prev_hash``/``hash``); they
take the migrating transaction's id as their ``xid`` and are sealed by the first sealer run, in id
order.

The three tables are append-only: a statement-level trigger refuses UPDATE, DELETE and TRUNCATE
on each, whoever runs them. (The test suite's flush empties tables with TRUNCATE: tests/conftest.py
lets it through for test databases only, with ``session_replication_role = replica``, which only
a superuser can set.) A superuser can still disable the triggers: the seals and the signed digests
are what catch that (verify_audit).
"""

from django.db import migrations, models

import audit.models

TABLES = ("audit_auditevent", "audit_auditseal", "audit_auditdigest")

DROP_OLD = """
DROP TRIGGER IF EXISTS audit_auditevent_append_only ON audit_auditevent;
DROP FUNCTION IF EXISTS audit_auditevent_append_only();
"""

FORWARD = """
CREATE FUNCTION audit_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING HINT = 'audit rows, seals and digests are never changed or deleted; see audit/models.py';
END;
$$;
""" + "".join(
    f"""
CREATE TRIGGER {table}_append_only
    BEFORE UPDATE OR DELETE OR TRUNCATE ON {table}
    FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only();
"""
    for table in TABLES
)

BACKWARD = (
    "".join(f"DROP TRIGGER IF EXISTS {table}_append_only ON {table};\n" for table in TABLES)
    + "DROP FUNCTION IF EXISTS audit_append_only();\n"
)


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0002_append_only_trigger"),
    ]

    operations = [
        migrations.RunSQL(DROP_OLD, migrations.RunSQL.noop),
        migrations.CreateModel(
            name="AuditDigest",
            fields=[
                ("id", models.BigAutoField(primary_key=True, serialize=False)),
                ("sealed_at", models.DateTimeField(db_default=audit.models.ClockTimestamp())),
                ("first_position", models.BigIntegerField()),
                ("last_position", models.BigIntegerField()),
                ("rows", models.IntegerField()),
                ("last_seal_hash", models.CharField(max_length=64)),
                ("frontier_xid", models.BigIntegerField()),
                ("frontier_event_id", models.BigIntegerField()),
                ("prev_hash", models.CharField(max_length=64, unique=True)),
                ("hash", models.CharField(max_length=64)),
                (
                    "signature",
                    models.CharField(
                        help_text="HMAC-SHA256 of hash (AUDIT_DIGEST_KEYS)", max_length=64
                    ),
                ),
            ],
            options={
                "db_table": "audit_auditdigest",
            },
        ),
        migrations.CreateModel(
            name="AuditSeal",
            fields=[
                ("position", models.BigIntegerField(primary_key=True, serialize=False)),
                ("event_id", models.BigIntegerField(unique=True)),
                (
                    "event_hash",
                    models.CharField(help_text="hash of the event row's values", max_length=64),
                ),
                ("prev_hash", models.CharField(max_length=64)),
                ("hash", models.CharField(max_length=64)),
                (
                    "digest_id",
                    models.BigIntegerField(help_text="the digest that signs this seal's batch"),
                ),
            ],
            options={
                "db_table": "audit_auditseal",
            },
        ),
        migrations.RemoveField(
            model_name="auditevent",
            name="hash",
        ),
        migrations.RemoveField(
            model_name="auditevent",
            name="prev_hash",
        ),
        migrations.AddField(
            model_name="auditevent",
            name="xid",
            field=models.BigIntegerField(
                db_default=audit.models.CurrentXactId(),
                help_text="the inserting transaction's id: the sealer seals a row once its transaction is older than every transaction still running",
            ),
        ),
        migrations.AlterField(
            model_name="auditevent",
            name="at",
            field=models.DateTimeField(db_default=audit.models.ClockTimestamp()),
        ),
        migrations.AddIndex(
            model_name="auditevent",
            index=models.Index(fields=["xid", "id"], name="audit_xid_idx"),
        ),
        migrations.RunSQL(FORWARD, BACKWARD),
    ]
