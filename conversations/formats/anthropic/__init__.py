"""Anthropic Messages API (``anthropic.messages``), one package: ``parser.py`` (the request, a
JSON response or an SSE stream, accumulated as the ``anthropic`` SDK does), ``live.py`` (the live
filter) and ``profile.py`` (block types, finish table, usage, continuation rules, words, capture
paths, probe), registered here as one format."""

from ..registry import register
from .kit import KIT
from .live import AnthropicLive
from .parser import AnthropicMessages
from .profile import FORMAT, PROFILE

register(AnthropicMessages, profile=PROFILE, live=AnthropicLive(), kit=KIT)

__all__ = ["FORMAT", "PROFILE"]
