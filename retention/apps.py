from django.apps import AppConfig


class RetentionConfig(AppConfig):
    name = "retention"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Exchanges for deleted conversations or customers are refused (410): conversations
        # never imports retention, so the tombstone check is handed to it here.
        from conversations.ingest.guards import guard_register

        from .services import tombstone_guard

        guard_register(tombstone_guard)
