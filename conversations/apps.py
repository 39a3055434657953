from django.apps import AppConfig


class ConversationsConfig(AppConfig):
    name = "conversations"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # A timestamp stored out of Python's range is read clamped, not as a 500 (timestamps.py).
        from . import timestamps

        timestamps.connect()
