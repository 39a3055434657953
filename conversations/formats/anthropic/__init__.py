"""Anthropic Messages API (``anthropic.messages``), one package: ``parser.py`` (the request, a JSON
response or an SSE stream, accumulated as the ``anthropic`` SDK does), ``live.py`` (the live
filter), ``profile.py`` (block types, finish table, usage, continuation rules, words, capture
paths, probe), and ``kit.py`` (the samples the generic tests, the demo and the API page read),
registered here as one format."""

from ..registry import register
from .kit import KIT
from .live import AnthropicLive
from .parser import AnthropicMessages
from .profile import FORMAT, PROFILE

register(AnthropicMessages, profile=PROFILE, live=AnthropicLive(), kit=KIT)

__all__ = ["FORMAT", "PROFILE"]
