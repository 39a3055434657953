"""The audit table is append-only: the database itself refuses UPDATE and DELETE.

A statement-level BEFORE trigger raises for every UPDATE or DELETE statement on the table, whatever
it would touch, whoever runs it (the ORM, raw SQL, psql), so no code path of the application can
rewrite history. A superuser (or the table's owner) can still disable the trigger: the hash chain
(verify_audit) is what catches that.

TRUNCATE is deliberately not refused: the test suite's flush (TransactionTestCase,
transactional_db) empties every table with TRUNCATE. A truncated log starts a new chain from the
genesis hash; production should let the application's database role INSERT and SELECT on this table
and nothing more, which also takes TRUNCATE and ALTER TABLE away from it.
"""

from django.db import migrations

FORWARD = """
CREATE FUNCTION audit_auditevent_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_auditevent is append-only: % refused', TG_OP
        USING HINT = 'audit rows are never changed or deleted; see audit/models.py';
END;
$$;

CREATE TRIGGER audit_auditevent_append_only
    BEFORE UPDATE OR DELETE ON audit_auditevent
    FOR EACH STATEMENT EXECUTE FUNCTION audit_auditevent_append_only();
"""

BACKWARD = """
DROP TRIGGER IF EXISTS audit_auditevent_append_only ON audit_auditevent;
DROP FUNCTION IF EXISTS audit_auditevent_append_only();
"""


class Migration(migrations.Migration):
    dependencies = [("audit", "0001_initial")]

    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
