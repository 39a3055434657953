"""The one registry of provider formats.

To add a format: write ``formats/<name>.py`` with a class that has a ``name`` and a ``parse``
method returning a ``ParsedExchange``, decorate it with ``@register``, and import the module in
``formats/__init__.py``. ``parse`` must raise ``FormatError`` (never anything else) for input
that does not fit, and must never put NEVER content into a ``Block``.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

from ..blocks import Block, ParsedExchange
from .base import FormatError


class Format(Protocol):
    name: str

    def parse(self, *, request: str, response: str | None, stream: str | None) -> ParsedExchange:
        """Parse one exchange. Exactly one of ``response`` and ``stream`` is given."""
        ...

    def message_blocks(self, raw: str) -> tuple[Block, ...]:
        """The blocks of one stored message (history element or output message)."""
        ...


def message_blocks(fmt: str, raw: str) -> tuple[Block, ...]:
    """The blocks of one stored message, parsed again from its raw text (re-projection)."""
    return get(fmt).message_blocks(raw)


def match_form(fmt: str, value: Any) -> Any:
    """The form of a message object used to match a resent history against the stored one.

    A format may define ``match_form(value)`` to drop what a client legitimately leaves out when
    it sends a message back (output-only fields such as an OpenAI item's ``status``); by default
    the whole value counts.
    """
    hook = getattr(_FORMATS.get(fmt), "match_form", None)
    return hook(value) if hook is not None else value


_FORMATS: dict[str, Format] = {}

F = TypeVar("F")


def register(cls: type[F]) -> type[F]:
    instance = cls()
    name = instance.name  # type: ignore[attr-defined]
    if name in _FORMATS:
        raise AssertionError(f"format {name!r} registered twice")
    _FORMATS[name] = instance  # type: ignore[assignment]
    return cls


def get(name: str) -> Format:
    try:
        return _FORMATS[name]
    except KeyError:
        raise FormatError(
            f"unknown format {name!r}; known: {', '.join(sorted(_FORMATS))}",
            field="format",
            code="unknown_format",
        ) from None


def names() -> list[str]:
    return sorted(_FORMATS)
