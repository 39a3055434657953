from django.urls import path, register_converter

from .live import LiveChunkCreateApi
from .views import ConversationEventCreateApi, ConversationMessagesApi, ExchangeCreateApi


class ConversationIdConverter:
    """A conversation id as ingest accepts it: any characters, "/" and line breaks included
    (``str`` stops at "/", so an id holding one could be stored but never replayed)."""

    regex = r"[\s\S]+"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(ConversationIdConverter, "conversation_id")

urlpatterns = [
    path("exchanges", ExchangeCreateApi.as_view(), name="api-exchange-create"),
    path("live/chunks", LiveChunkCreateApi.as_view(), name="api-live-chunks"),
    path(
        "conversations/<conversation_id:conversation>/messages",
        ConversationMessagesApi.as_view(),
        name="api-conversation-messages",
    ),
    path(
        "conversations/<conversation_id:conversation>/events",
        ConversationEventCreateApi.as_view(),
        name="api-conversation-events",
    ),
]
