"""Google Gemini (``google.generate_content``: the Gemini API's and Vertex AI's
``generateContent`` and ``streamGenerateContent``), one package: ``parser.py`` (the request, a
JSON response or a stream), ``parts.py`` (a part's blocks, signatures, the match form),
``stream.py`` (SSE and the JSON-array framing), ``live.py`` (the live filter), ``profile.py``
(block types, finish table, usage, continuation rules, words, capture paths, endpoint, probe)
and ``kit.py`` (the samples the generic tests, the demo and the API page read), registered here
as one format."""

from ..registry import register
from .kit import KIT
from .live import GoogleLive
from .parser import GoogleGenerateContent
from .profile import FORMAT, PROFILE

register(GoogleGenerateContent, profile=PROFILE, live=GoogleLive(), kit=KIT)

__all__ = ["FORMAT", "PROFILE"]
