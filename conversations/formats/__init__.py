"""Provider formats: pure parsing, no Django model (DESIGN section 3).

Importing this package registers every format.
"""

from . import ai_sdk, anthropic, openai_chat, openai_responses  # noqa: F401  (registration)
from .base import FormatError
from .registry import get, names

__all__ = ["FormatError", "get", "names"]
