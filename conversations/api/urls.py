from django.urls import path

from .live import LiveChunkCreateApi
from .views import ConversationEventCreateApi, ConversationMessagesApi, ExchangeCreateApi

urlpatterns = [
    path("exchanges", ExchangeCreateApi.as_view(), name="api-exchange-create"),
    path("live/chunks", LiveChunkCreateApi.as_view(), name="api-live-chunks"),
    path(
        "conversations/<str:conversation>/messages",
        ConversationMessagesApi.as_view(),
        name="api-conversation-messages",
    ),
    path(
        "conversations/<str:conversation>/events",
        ConversationEventCreateApi.as_view(),
        name="api-conversation-events",
    ),
]
