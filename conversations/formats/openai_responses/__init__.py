"""OpenAI Responses API (``openai.responses``), one package: ``parser.py`` (request input items,
response output items and the typed SSE stream, accumulated as the ``openai`` SDK does),
``live.py`` (the live filter), ``profile.py`` (block types, finish table, usage, continuation
rules, words, capture paths, probe), and ``kit.py`` (the samples the generic tests, the demo and
the API page read), registered here as one format."""

from ..registry import register
from .kit import KIT
from .live import ResponsesLive
from .parser import OpenAIResponses
from .profile import FORMAT, PROFILE

register(OpenAIResponses, profile=PROFILE, live=ResponsesLive(), kit=KIT)

__all__ = ["FORMAT", "PROFILE"]
