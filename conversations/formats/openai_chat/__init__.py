"""OpenAI Chat Completions (``openai.chat``) and the servers that speak it, one package:
``parser.py`` (request, response and ``chat.completion.chunk`` stream, accumulated as the
``openai`` SDK does), ``live.py`` (the live filter), ``profile.py`` (block types, the
``<think>`` convention, finish table, usage, continuation rules, words, capture paths, probe),
and ``kit.py`` (the samples the generic tests, the demo and the API page read), registered here
as one format."""

from ..registry import register
from .kit import KIT
from .live import ChatLive
from .parser import OpenAIChat
from .profile import FORMAT, PROFILE

register(OpenAIChat, profile=PROFILE, live=ChatLive(), kit=KIT)

__all__ = ["FORMAT", "PROFILE"]
