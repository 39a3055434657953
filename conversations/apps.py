from django.apps import AppConfig


class ConversationsConfig(AppConfig):
    name = "conversations"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # A timestamp stored out of Python's range is read clamped, not as a 500 (timestamps.py).
        from . import timestamps

        timestamps.connect()
        # Ingest remembers the queues it has created; a deleted queue is created again by the
        # next conversation that names it.
        from django.db.models.signals import post_delete

        from .ingest.store import known_queues_forget
        from .models import Queue

        post_delete.connect(known_queues_forget, sender=Queue, weak=False)
