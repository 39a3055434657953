"""The one registry of provider formats, and what every format is.

A format is one package, ``formats/<name>/`` (DESIGN sections 14 and 19), registered by its
``__init__.py`` with ``register(<Format subclass>, profile=..., live=..., kit=...)``:

- ``parser.py``: a subclass of ``Format`` with ``name`` (the body's ``format`` value,
  ``"anthropic.messages"``), ``read`` (one exchange parsed into a ``ParsedExchange``;
  ``parse`` runs the preamble every format shares first, below; it raises ``FormatError``,
  never anything else, for input that does not fit, and never puts NEVER content into a
  ``Block``), ``message_blocks`` (the blocks of one stored message, parsed again),
  ``reasoning`` (the reasoning of one stored message, as ``Trace`` values, for the review page
  and nothing else: ``reviews/reasoning.py`` is its one caller) and, optionally,
  ``match_form`` (what a client may leave out when it sends a message back). A format whose
  provider streams binary frames (AWS eventstream) sets ``binary_stream`` and writes
  ``read_binary``: its streams come as the body's ``stream_base64``;
- ``live.py``: its live filter, a ``live.LiveFilter`` (DESIGN section 10), naming the class
  of ``static/console/stream-filter.js`` that is the same filter in the browser;
- ``profile.py``: its ``profile.Profile``: block types, finish table, usage, continuation
  rules, words, capture paths, probe, and the hooks other rooms ask instead of naming it;
- ``kit.py``: its ``kit.Kit``: the samples the generic tests, the demo and the API page use.

``register`` refuses a format with a part missing: a reader not written (an abstract method),
no live filter, a profile lacking a table (``Profile.missing``), no kit or a kit lacking a
sample (``Kit.missing``), or parts that name another format. ``formats/__init__.py`` imports
every package of ``formats/``, and the console's rooms read the registry; what cannot import
it (the browser's stream filter table, the clients' capture tables) is written from it by
``manage.py write_format_tables`` and compared byte for byte by a test.
"""

from __future__ import annotations

import abc
import base64
import binascii
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar, TypeVar

from ..blocks import Block, BlockClass, ParsedExchange, register_types
from .base import FormatError, check_output, expect
from .kit import Kit
from .live import LiveFilter
from .profile import Endpoint, Profile
from .traces import Trace

# The body's ``endpoint``: a path (and query) without scheme or host, no whitespace.
ENDPOINT_PATTERN = r"^/[^\s]*$"


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
    # The provider streams binary frames (AWS eventstream), not text: a stream comes as the
    # body's ``stream_base64`` and is read by ``read_binary``; ``stream`` is refused.
    binary_stream: ClassVar[bool] = False
    # Set by ``register`` from the format package's parts.
    profile: Profile
    live: LiveFilter
    kit: Kit

    @property
    def block_types(self) -> Mapping[BlockClass, Iterable[str]]:
        return self.profile.block_types

    def parse(
        self,
        *,
        request: str,
        response: str | None = None,
        stream: str | None = None,
        stream_base64: str | None = None,
        endpoint: str | None = None,
        cancelled: bool = False,
    ) -> ParsedExchange:
        """Parse one exchange. The preamble every format shares, written once: exactly one of
        ``response``, ``stream`` and ``stream_base64`` (``response_or_stream``), every body given
        a string (``wrong_type``), a stream in the form the format takes (``stream_kind``: text
        for most, binary for a ``binary_stream`` format), ``stream_base64`` decoded
        (``not_base64``), the ``endpoint`` read (``endpoint``), and input nested past what the
        decoder can recurse into refused as ``too_deep``, naming the body that is.

        ``endpoint``: the path and query the call was sent to, without the host. The profile's
        ``endpoint`` rule reads the model from it; where the provider puts the model in the URL
        the rule requires it, and an endpoint missing or naming no model is refused at
        ``$.endpoint``. The model read is the exchange's requested model when the request body
        names none. A format without a rule ignores an endpoint (it is the clients' habit to
        send one).

        ``cancelled``: the client stopped reading the stream before its end (the chat was
        closed): the stream is what arrived. Its missing end, and an event cut off at the end,
        are then not refused as ``truncated_stream``: the message is what its events built, and
        ``params.cancelled`` says so. A ``response`` cannot be cancelled: half a JSON body is no
        message (``ingest/body.py`` refuses it as ``cancelled_response``)."""
        output_field = check_output(response, stream, stream_base64)
        if cancelled and output_field == "response":  # the body's check refuses it first
            raise ValueError("only a stream can be cancelled")
        expect(request, str, field="request", at="$")
        output = {"response": response, "stream": stream, "stream_base64": stream_base64}
        expect(output[output_field], str, field=output_field, at="$")
        # An endpoint the format refuses is reported once the bodies are read: a body's own
        # error (its kind, its nesting, its JSON) names the body first.
        try:
            read_endpoint, endpoint_error = self._endpoint(endpoint), None
        except FormatError as exc:
            read_endpoint, endpoint_error = None, exc
        if output_field == "stream_base64" and not self.binary_stream:
            raise FormatError(
                f"{self.name} streams are text: send the stream as stream, not stream_base64",
                field="stream_base64",
                code="stream_kind",
            )
        if output_field == "stream" and self.binary_stream:
            raise FormatError(
                f"{self.name} streams are binary: send the stream base64-encoded as stream_base64",
                field="stream",
                code="stream_kind",
            )
        try:
            if stream_base64 is not None:
                parsed = self.read_binary(
                    request=request,
                    data=decode_base64(stream_base64),
                    endpoint=read_endpoint,
                    cancelled=cancelled,
                )
            else:
                parsed = self.read(
                    request=request,
                    response=response,
                    stream=stream,
                    endpoint=read_endpoint,
                    cancelled=cancelled,
                )
        except RecursionError:
            field = "request" if _too_deep(request) else output_field
            raise FormatError("JSON nested too deep", field=field, code="too_deep") from None
        if endpoint_error is not None:
            raise endpoint_error
        parsed.params.cancelled = cancelled
        if read_endpoint is not None and read_endpoint.model and not parsed.params.requested_model:
            parsed.params.requested_model = read_endpoint.model
        return parsed

    def _endpoint(self, endpoint: str | None) -> Endpoint | None:
        """The body's ``endpoint`` read by the profile's rule (None: none given)."""
        rule = self.profile.endpoint
        if endpoint is None:
            if rule is not None and rule.required:
                raise FormatError(
                    f"{self.name} calls name their model in the URL: give the endpoint "
                    "(its path and query, without the host)",
                    field="endpoint",
                    at="$.endpoint",
                    code="endpoint",
                )
            return None
        expect(endpoint, str, field="endpoint", at="$.endpoint")
        if not re.match(ENDPOINT_PATTERN, endpoint):
            raise FormatError(
                "the endpoint is the path and query the call was sent to, without the host "
                "(it starts with /)",
                field="endpoint",
                at="$.endpoint",
                code="endpoint",
            )
        read = Endpoint.of(endpoint)
        if rule is None:
            return read
        model = rule.model(read)
        if rule.required and not model:
            raise FormatError(
                f"the endpoint names no model ({self.name} reads it from the path)",
                field="endpoint",
                at="$.endpoint",
                code="endpoint",
            )
        return Endpoint(read.raw, read.path, read.query, model or None)

    @abc.abstractmethod
    def read(
        self,
        *,
        request: str,
        response: str | None,
        stream: str | None,
        endpoint: Endpoint | None,
        cancelled: bool,
    ) -> ParsedExchange:
        """Parse one exchange whose bodies passed the preamble: exactly one of ``response`` and
        ``stream`` is given, and every body given is a string. ``endpoint``: the call's endpoint
        as the profile read it (None: none given). ``cancelled`` (streams only): an end
        missing, or an event cut off at the end, is what arrived, not an error."""

    def read_binary(
        self, *, request: str, data: bytes, endpoint: Endpoint | None, cancelled: bool
    ) -> ParsedExchange:
        """Parse one exchange whose answer is a binary stream (``binary_stream`` formats only):
        ``data`` is the stream's bytes exactly as received. A malformed frame raises
        ``FormatError(..., field="stream_base64", at=base.byte_at(offset), code=...)`` naming
        the byte offset where it starts."""
        raise FormatError(
            f"{self.name} streams are text", field="stream_base64", code="stream_kind"
        )

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


def decode_base64(text: str) -> bytes:
    """The bytes of a ``stream_base64`` (standard alphabet, padded), or a FormatError."""
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise FormatError(
            "not base64 (the standard alphabet, padded)", field="stream_base64", code="not_base64"
        ) from None


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


def register(cls: F, *, profile: Profile, live: LiveFilter, kit: Kit) -> F:
    """Register a format from its four parts. Refused (``TypeError``): a parser missing a
    reader, no live filter (or one naming no browser class), a profile missing a part, no kit
    or a kit missing a sample, parts of different formats."""
    if not (isinstance(cls, type) and issubclass(cls, Format)):
        raise TypeError(f"{cls!r} is not a Format")
    instance = cls()  # TypeError here when an abstract method (a reader) is missing
    name = instance.name
    if not isinstance(profile, Profile):
        raise TypeError(f"{name}: no profile (a formats.profile.Profile)")
    if not isinstance(live, LiveFilter):
        raise TypeError(f"{name}: no live filter (a formats.live.LiveFilter)")
    if not getattr(live, "browser", ""):
        raise TypeError(f"{name}: the live filter names no browser class (browser)")
    if not isinstance(kit, Kit):
        raise TypeError(f"{name}: no kit (a formats.kit.Kit)")
    if profile.format != name or live.format != name or kit.format != name:
        raise TypeError(
            f"{name}: its parts name other formats (profile {profile.format!r}, "
            f"live filter {live.format!r}, kit {kit.format!r})"
        )
    missing = profile.missing()
    if missing:
        raise TypeError(f"{name}: the profile lacks {', '.join(missing)}")
    missing = kit.missing()
    if missing:
        raise TypeError(f"{name}: the kit lacks {', '.join(missing)}")
    if cls.binary_stream and cls.read_binary is Format.read_binary:
        raise TypeError(f"{name}: a binary_stream format without read_binary")
    if name in _FORMATS:
        raise AssertionError(f"format {name!r} registered twice")
    register_types(name, profile.block_types)
    instance.profile = profile
    instance.live = live
    instance.kit = kit
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


def transport_settings() -> dict[str, str]:
    """The settings every format's ``transport`` reads (its provider's address and key), with
    their defaults: ``console/settings.py`` reads each from the environment."""
    out: dict[str, str] = {}
    for fmt in formats():
        if fmt.profile.transport is not None:
            out.update(fmt.profile.transport.settings)
    return out


def profile(name: str) -> Profile | None:
    """The profile of a format, or None for a name no format has (a stored row of a format
    since removed: the callers show it as received)."""
    found = _FORMATS.get(name)
    return found.profile if found is not None else None
