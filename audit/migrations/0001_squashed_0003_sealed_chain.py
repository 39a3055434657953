"""The audit log, as its three earlier migrations left it (squashed): events appended unchained,
seals chaining committed rows (``audit_auditseal``), signed digests of each batch
(``audit_auditdigest``); the sealer is audit/sealer.py.

The three tables are append-only: a statement-level trigger refuses UPDATE, DELETE and TRUNCATE
on each, whoever runs them. (The test suite's flush empties tables with TRUNCATE: tests/conftest.py
lets it through for test databases only, with ``session_replication_role = replica``, which only
a superuser can set.) A superuser can still disable the triggers: the seals and the signed digests
are what catch that (verify_audit).

A database migrated through the three earlier migrations has this one as applied.
"""

from django.db import migrations, models

import audit.models

TABLES = ("audit_auditevent", "audit_auditseal", "audit_auditdigest")

APPEND_ONLY = """
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
    initial = True

    replaces = [
        ("audit", "0001_initial"),
        ("audit", "0002_append_only_trigger"),
        ("audit", "0003_sealed_chain"),
    ]

    dependencies = []

    operations = [
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
        migrations.CreateModel(
            name="AuditEvent",
            fields=[
                ("id", models.BigAutoField(primary_key=True, serialize=False)),
                ("at", models.DateTimeField(db_default=audit.models.ClockTimestamp())),
                (
                    "xid",
                    models.BigIntegerField(
                        db_default=audit.models.CurrentXactId(),
                        help_text="the inserting transaction's id: the sealer seals a row once its transaction is older than every transaction still running",
                    ),
                ),
                (
                    "code",
                    models.CharField(
                        help_text="the event type's stable code (registry.py)", max_length=60
                    ),
                ),
                (
                    "actor_id",
                    models.IntegerField(
                        blank=True,
                        help_text="the Django user's id; empty for the system or a token",
                        null=True,
                    ),
                ),
                (
                    "actor_label",
                    models.CharField(
                        help_text="username at the time, 'system' or 'service-token:<name>'",
                        max_length=200,
                    ),
                ),
                (
                    "conversation_id",
                    models.BigIntegerField(
                        blank=True,
                        help_text="internal id (no foreign key: the log outlives erasure)",
                        null=True,
                    ),
                ),
                (
                    "subject_hash",
                    models.CharField(
                        blank=True,
                        help_text="keyed hash of the customer id",
                        max_length=64,
                        null=True,
                    ),
                ),
                ("details", models.JSONField(blank=True, default=dict)),
            ],
            options={
                "db_table": "audit_auditevent",
                "indexes": [
                    models.Index(fields=["code", "-id"], name="audit_code_idx"),
                    models.Index(fields=["actor_id", "-id"], name="audit_actor_idx"),
                    models.Index(fields=["conversation_id", "-id"], name="audit_conversation_idx"),
                    models.Index(fields=["subject_hash", "-id"], name="audit_subject_idx"),
                    models.Index(fields=["at"], name="audit_at_idx"),
                    models.Index(fields=["xid", "id"], name="audit_xid_idx"),
                ],
            },
        ),
        migrations.RunSQL(APPEND_ONLY, BACKWARD),
    ]
