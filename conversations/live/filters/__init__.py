"""The inbound filters, one per format (``base.py`` says what they publish and how to add one)."""

from __future__ import annotations

from typing import Any

from .ai_sdk import AiSdkFilter
from .anthropic import AnthropicFilter
from .base import Event, Filter
from .openai_chat import ChatFilter
from .openai_responses import ResponsesFilter

FILTERS: dict[str, type[Filter]] = {
    f.format: f for f in (AnthropicFilter, ResponsesFilter, ChatFilter, AiSdkFilter)
}


def filter_for(fmt: str, state: dict[str, Any] | None = None) -> Filter:
    return FILTERS[fmt](state)


__all__ = ["FILTERS", "Event", "Filter", "filter_for"]
