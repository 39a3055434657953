"""The one registry of provider formats, and what every format is.

A format is one package, ``formats/<name>/`` (DESIGN section 14), registered by its
``__init__.py`` with ``register(<Format subclass>, profile=..., live=...)``:

- ``parser.py``: a subclass of ``Format`` with ``name`` (the body's ``format`` value,
  ``"anthropic.messages"``), ``read`` (one exchange parsed into a ``ParsedExchange``;
  ``parse`` runs the preamble every format shares first, below; it raises ``FormatError``,
  never anything else, for input that does not fit, and never puts NEVER content into a
  ``Block``), ``message_blocks`` (the blocks of one stored message, parsed again),
  ``reasoning`` (the reasoning of one stored message, as ``Trace`` values, for the review page
  and nothing else: ``reviews/reasoning.py`` is its one caller) and, optionally,
  ``match_form`` (what a client may leave out when it sends a message back);
- ``live.py``: its live filter, a ``live.LiveFilter`` (DESIGN section 10);
- ``profile.py``: its ``profile.Profile``: block types, finish table, usage, continuation
  rules, words, capture paths, probe.

``register`` refuses a format with a part missing: a reader not written (an abstract method),
no live filter, a profile lacking a table (``Profile.missing``), or parts that name another
format. ``formats/__init__.py`` imports every package of ``formats/``, and the console's rooms
read the registry; what cannot import it (the browser's stream filter, the clients' capture
tables, the ingest examples) is held to it by a test (docs/architecture.md: "Where do I add").
"""

from __future__ import annotations

import abc
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar, TypeVar

from ..blocks import Block, BlockClass, ParsedExchange, register_types
from .base import FormatError, check_output, expect
from .live import LiveFilter
from .profile import Profile
from .traces import Trace


def _too_deep(text: str) -> bool:
    """The text nests deeper than the decoder can recurse into (only asked once parsing failed
    with RecursionError, to name the body at fault)."""
    try:
        json.loads(text)
    except RecursionError:
        return True
    except ValueError:
        return False
    return False


class Format(abc.ABC):
    name: ClassVar[str]
    # Set by ``register`` from the format package's parts.
    profile: Profile
    live: LiveFilter

    @property
    def block_types(self) -> Mapping[BlockClass, Iterable[str]]:
        return self.profile.block_types

    def parse(
        self,
        *,
        request: str,
        response: str | None = None,
        stream: str | None = None,
        cancelled: bool = False,
    ) -> ParsedExchange:
        """Parse one exchange. The preamble every format shares, written once: exactly one of
        ``response`` and ``stream`` (``response_or_stream``), every body given a string
        (``wrong_type``), and input nested past what the decoder can recurse into refused as
        ``too_deep``, naming the body that is.

        ``cancelled``: the client stopped reading the stream before its end (the chat was
        closed): the stream is what arrived. Its missing end, and an event cut off at the end,
        are then not refused as ``truncated_stream``: the message is what its events built, and
        ``params.cancelled`` says so. A ``response`` cannot be cancelled: half a JSON body is no
        message (``ingest/body.py`` refuses it as ``cancelled_response``)."""
        output_field = check_output(response, stream)
        if cancelled and stream is None:  # the body's check refuses it first (a 400)
            raise ValueError("only a stream can be cancelled")
        expect(request, str, field="request", at="$")
        expect(response if output_field == "response" else stream, str, field=output_field, at="$")
        try:
            parsed = self.read(
                request=request, response=response, stream=stream, cancelled=cancelled
            )
        except RecursionError:
            field = "request" if _too_deep(request) else output_field
            raise FormatError("JSON nested too deep", field=field, code="too_deep") from None
        parsed.params.cancelled = cancelled
        return parsed

    @abc.abstractmethod
    def read(
        self, *, request: str, response: str | None, stream: str | None, cancelled: bool
    ) -> ParsedExchange:
        """Parse one exchange whose bodies passed the preamble: exactly one of ``response`` and
        ``stream`` is given, and every body given is a string. ``cancelled`` (streams only): an
        end missing, or an event cut off at the end, is what arrived, not an error."""

    @abc.abstractmethod
    def message_blocks(self, raw: str) -> tuple[Block, ...]:
        """The blocks of one stored message (history element or output message)."""

    @abc.abstractmethod
    def reasoning(self, message: Any) -> Iterator[Trace]:
        """The reasoning in one stored message (its parsed JSON), in order. Never raises on a
        shape it does not expect (the message was checked at ingest): it skips it."""

    def match_form(self, value: Any) -> Any:
        """The form of a message object used to match a resent history against the stored one:
        by default the whole value counts."""
        return value


def message_blocks(fmt: str, raw: str) -> tuple[Block, ...]:
    """The blocks of one stored message, parsed again from its raw text (re-projection)."""
    return get(fmt).message_blocks(raw)


def match_form(fmt: str, value: Any) -> Any:
    """The form of a message object used to match a resent history against the stored one (a
    format drops what a client legitimately leaves out, such as an OpenAI item's ``status``)."""
    found = _FORMATS.get(fmt)
    return found.match_form(value) if found is not None else value


_FORMATS: dict[str, Format] = {}

F = TypeVar("F", bound=type[Format])


def register(cls: F, *, profile: Profile, live: LiveFilter) -> F:
    """Register a format from its three parts. Refused (``TypeError``): a parser missing a
    reader, no live filter, a profile missing a part, parts of different formats."""
    if not (isinstance(cls, type) and issubclass(cls, Format)):
        raise TypeError(f"{cls!r} is not a Format")
    instance = cls()  # TypeError here when an abstract method (a reader) is missing
    name = instance.name
    if not isinstance(profile, Profile):
        raise TypeError(f"{name}: no profile (a formats.profile.Profile)")
    if not isinstance(live, LiveFilter):
        raise TypeError(f"{name}: no live filter (a formats.live.LiveFilter)")
    if profile.format != name or live.format != name:
        raise TypeError(
            f"{name}: its parts name other formats (profile {profile.format!r}, "
            f"live filter {live.format!r})"
        )
    missing = profile.missing()
    if missing:
        raise TypeError(f"{name}: the profile lacks {', '.join(missing)}")
    if name in _FORMATS:
        raise AssertionError(f"format {name!r} registered twice")
    register_types(name, profile.block_types)
    instance.profile = profile
    instance.live = live
    _FORMATS[name] = instance
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


def formats() -> list[Format]:
    """Every registered format, by name."""
    return [_FORMATS[name] for name in sorted(_FORMATS)]


def profile(name: str) -> Profile | None:
    """The profile of a format, or None for a name no format has (a stored row of a format
    since removed: the callers show it as received)."""
    found = _FORMATS.get(name)
    return found.profile if found is not None else None
