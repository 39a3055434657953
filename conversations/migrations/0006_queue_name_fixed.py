"""A queue's name is fixed once it exists.

Conversations name their queue (``Conversation.queue``, from the exchange's ``labels.queue``), and
who sees a conversation is a permission on the Queue of that name. Renaming a queue would hide
its conversations from everyone granted it, silently; so the database refuses it, whoever asks
(the admin shows the name read-only, conversations/admin/config.py: QueueAdmin).
"""

from django.db import migrations

FORWARD = """
CREATE FUNCTION conversations_queue_name_fixed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.name IS DISTINCT FROM OLD.name THEN
        RAISE EXCEPTION 'queue % cannot be renamed: its conversations name it', OLD.name
            USING HINT = 'create a new queue instead; see conversations/migrations/0006';
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER conversations_queue_name_fixed
    BEFORE UPDATE OF name ON conversations_queue
    FOR EACH ROW EXECUTE FUNCTION conversations_queue_name_fixed();
"""

BACKWARD = """
DROP TRIGGER IF EXISTS conversations_queue_name_fixed ON conversations_queue;
DROP FUNCTION IF EXISTS conversations_queue_name_fixed();
"""


class Migration(migrations.Migration):
    dependencies = [("conversations", "0005_service_token_scope")]

    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
