"""The Vercel AI SDK UI protocol (``ai-sdk.ui``), one package: ``parser.py`` (the chat request, the
assistant UIMessage or the UI message stream, accumulated as ``useChat`` does), ``live.py`` (the
live filter), ``profile.py`` (part types, the ``<think>`` convention, finish table,
continuation rules, words), and ``kit.py`` (the samples the generic tests, the demo and the API
page read), registered here as one format."""

from ..registry import register
from .kit import KIT
from .live import AiSdkLive
from .parser import AiSdkUi
from .profile import FORMAT, PROFILE

register(AiSdkUi, profile=PROFILE, live=AiSdkLive(), kit=KIT)

__all__ = ["FORMAT", "PROFILE"]
