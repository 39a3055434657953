"""Bedrock Converse (``bedrock.converse``), one package: ``parser.py`` (the request and a Converse
JSON response), ``stream.py`` and ``eventstream.py`` (the ConverseStream's binary frames,
decoded with botocore's decoder, accumulated), ``live.py`` (the live filter), ``profile.py``
(block types, finish table, usage, continuation rules, capture paths, the model read from the
endpoint) and ``kit.py`` (the samples the generic tests, the demo and the API page read),
registered here as one format."""

from ..registry import register
from .kit import KIT
from .live import BedrockLive
from .parser import BedrockConverse
from .profile import FORMAT, PROFILE

register(BedrockConverse, profile=PROFILE, live=BedrockLive(), kit=KIT)

__all__ = ["FORMAT", "PROFILE"]
