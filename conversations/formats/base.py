"""What every format shares: the error it raises and helpers that keep the exact bytes.

``json_spans`` is how a format keeps each message object byte for byte: it walks the raw JSON text
with the standard library's C decoder (``raw_decode``) and returns, for each element of an array,
both the parsed value and the exact source text it came from. Nothing is re-serialised.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .. import bounds
from ..blocks import Params

_DECODER = json.JSONDecoder()
_WS = " \t\n\r"
_SURROGATE = re.compile("[\ud800-\udfff]")
# Only text holding one of these can hold a number JSON cannot carry back (NaN, Infinity, an
# exponent that overflows a double): the cheap test before a strict parse.
_MAYBE_NOT_FINITE = re.compile(r"NaN|Infinity|[eE][+]?\d{3}")


class FormatError(ValueError):
    """Input that does not fit its format. ``field`` names the body field (request, response,
    stream), ``at`` the JSON path inside it."""

    def __init__(self, detail: str, *, field: str, at: str = "$", code: str = "invalid") -> None:
        super().__init__(detail)
        self.detail = detail
        self.field = field
        self.at = at
        self.code = code


# Every code a format raises, and what it means (the API's 400 response documents them;
# ``tests/conversations/test_ingest_body.py`` fails when a format raises a code not listed here,
# or one listed here is raised nowhere).
FORMAT_ERRORS: dict[str, str] = {
    "response_or_stream": "not exactly one of response, stream and stream_base64",
    "stream_kind": "a stream in the form its format does not take (stream_base64 for a text "
    "stream, stream for a binary one)",
    "not_base64": "stream_base64 is not base64 (the standard alphabet, padded)",
    "endpoint": "the endpoint is missing where the format reads the model from it, is not a path "
    "(it starts with /, no host), or names no model",
    "wrong_type": "a value of the wrong JSON type (a body that is not a string, an object where "
    "an array belongs)",
    "not_json": "a body (or a stream event's data) that is not valid JSON",
    "too_deep": "JSON nested deeper than the decoder can read",
    "missing": "a member the format requires is missing",
    "empty": "a member that must not be empty is",
    "invalid": "a value the format does not accept",
    "bad_value": "a value outside the ones the format defines (a role, a type)",
    "wrong_value": "a value outside the ones the format defines (a role)",
    "invalid_role": "a message of a role the format does not allow there",
    "bad_unicode": "a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape)",
    "invalid_unicode": "a lone UTF-16 surrogate that UTF-8 cannot hold",
    "provider_error": "the response is the provider's error, not an answer",
    "truncated_stream": "the stream ends before the provider's end of message (not cancelled)",
    "out_of_order": "a stream event before the one that must open it",
    "after_stop": "a stream event after the end of the message",
    "duplicate_index": "a stream opens a content index that is already open",
    "unknown_index": "a stream event for a content index no event opened",
    "unknown_id": "a stream chunk for an id no chunk opened",
    "block_stopped": "a stream event for a content block already closed",
    "unknown_format": "format names no registered format",
    "min_value": "a count (tokens) below zero",
    "max_value": "a count (tokens) larger than its column holds (2**31 - 1)",
}


def check_output(response: str | None, stream: str | None, stream_base64: str | None = None) -> str:
    """The body field that holds the output: exactly one of ``response``, ``stream`` and
    ``stream_base64`` must be given. The one check of it (the ingest body and every format's
    ``parse`` call this), with the one code ``response_or_stream``."""
    given = [
        name
        for name, value in (
            ("response", response),
            ("stream", stream),
            ("stream_base64", stream_base64),
        )
        if value is not None
    ]
    if len(given) != 1:
        raise FormatError(
            "give exactly one of response, stream and stream_base64",
            field="response",
            code="response_or_stream",
        )
    return given[0]


def byte_at(offset: int) -> str:
    """The ``at`` of an error in a binary stream: the byte offset (in the decoded bytes) where
    the bad frame starts, as ``$[offset]``."""
    return f"$[{offset}]"


@dataclass(frozen=True, slots=True)
class Span:
    value: Any
    raw: str
    elements: list[Span] | None = None  # an array member split element by element


def loads(text: str, *, field: str, at: str = "$") -> Any:
    """json.loads with a FormatError naming the field and position.

    The C decoder recurses, so a body nested thousands deep raises RecursionError: refused too."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(
            f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
            field=field,
            at=at,
            code="not_json",
        ) from None
    except ValueError as exc:  # an integer longer than int() reads (sys.get_int_max_str_digits)
        raise FormatError(f"not valid JSON: {exc}", field=field, at=at, code="not_json") from None
    except RecursionError:
        raise FormatError("JSON nested too deep", field=field, code="too_deep") from None


class NotFinite(ValueError):
    """A number a JSON text cannot carry back: NaN, Infinity, or one that overflows a double."""


def _refuse_constant(name: str) -> Any:
    raise NotFinite(f"{name} is not JSON")


def finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise NotFinite(f"the number {text[:40]} is out of range")
    return value


def maybe_not_finite(text: str) -> bool:
    """False when ``text`` cannot hold NaN, Infinity or an overflowing number (the common case);
    True means: parse it with ``strict_loads`` to know."""
    return _MAYBE_NOT_FINITE.search(text) is not None


def strict_loads(text: str) -> Any:
    """``json.loads`` for JSON whose value is serialised again (a streamed message): NaN,
    Infinity and numbers beyond a double's range raise ``NotFinite`` (a ValueError) instead of
    coming back as ``NaN``/``Infinity`` in stored text, which is not JSON. Other errors are
    ``json.loads``'s own (JSONDecodeError, and ValueError for an over-long integer)."""
    if not maybe_not_finite(text):
        return json.loads(text)
    return json.loads(text, parse_constant=_refuse_constant, parse_float=finite_float)


def has_surrogate(text: str) -> bool:
    """Whether ``text`` holds a UTF-16 surrogate code point (parsed JSON pairs ``\\ud83d\\ude00``
    into one character, so a surrogate left in a parsed string is a lone one)."""
    return _SURROGATE.search(text) is not None


def join_pieces(pieces: Iterable[str]) -> str:
    """The pieces of a streamed string, joined. A UTF-16 surrogate pair split across two deltas
    (each JSON string carried one half as a ``\\u`` escape) is one character again, as every
    UTF-16 runtime (and each SDK's concatenation) sees it; a half that stays alone is left for
    ``compact_checked`` to refuse."""
    text = "".join(pieces)
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _skip_ws(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in _WS:
        i += 1
    return i


def object_member_spans(text: str, *, field: str) -> dict[str, Span]:
    """The members of a top-level JSON object, each with its exact source text.

    One pass of the C decoder over the text. A member whose value is an array is decoded element
    by element, so its elements' spans come without decoding it twice (``element_spans``). A
    repeated key keeps its last occurrence, as ``json.loads`` does. Anything malformed is
    reported by ``loads`` with its line and column.
    """
    try:
        return _members(text, field)
    except (_Malformed, IndexError, ValueError):  # ValueError: JSONDecodeError, over-long int
        loads(text, field=field)  # raises the precise error
        raise FormatError("expected a JSON object", field=field, code="wrong_type") from None
    except RecursionError:
        raise FormatError("JSON nested too deep", field=field, code="too_deep") from None


class _Malformed(Exception):
    pass


def _expect_char(text: str, i: int, char: str) -> int:
    if text[i] != char:
        raise _Malformed
    return _skip_ws(text, i + 1)


def _members(text: str, field: str) -> dict[str, Span]:
    i = _skip_ws(text, 0)
    if i >= len(text) or text[i] != "{":
        loads(text, field=field)  # not JSON at all: say where
        raise FormatError("expected a JSON object", field=field, code="wrong_type")
    members: dict[str, Span] = {}
    i = _skip_ws(text, i + 1)
    if text[i] != "}":
        while True:
            if text[i] != '"':
                raise _Malformed
            key, i = _DECODER.raw_decode(text, i)
            i = _expect_char(text, _skip_ws(text, i), ":")
            start = i
            if text[i] == "[":
                elements, i = _elements(text, i)
                members[key] = Span([e.value for e in elements], text[start:i], elements)
            else:
                value, i = _DECODER.raw_decode(text, i)
                members[key] = Span(value, text[start:i])
            i = _skip_ws(text, i)
            if text[i] == "}":
                break
            i = _expect_char(text, i, ",")
    if _skip_ws(text, i + 1) != len(text):
        raise _Malformed  # trailing data
    return members


def _elements(text: str, i: int) -> tuple[list[Span], int]:
    """The elements of the array starting at ``text[i]``, and the index just past it."""
    out: list[Span] = []
    i = _skip_ws(text, i + 1)
    if text[i] == "]":
        return out, i + 1
    while True:
        start = i
        value, i = _DECODER.raw_decode(text, i)
        out.append(Span(value, text[start:i]))
        i = _skip_ws(text, i)
        if text[i] == "]":
            return out, i + 1
        i = _expect_char(text, i, ",")


def array_element_spans(raw_array: str, *, field: str, at: str) -> list[Span]:
    """The elements of a JSON array given as its exact source text, each with its exact text."""
    i = _skip_ws(raw_array, 0)
    if i >= len(raw_array) or raw_array[i] != "[":
        raise FormatError("expected an array", field=field, at=at, code="wrong_type")
    try:
        return _elements(raw_array, i)[0]
    except (_Malformed, IndexError, ValueError):
        raise FormatError("not a valid JSON array", field=field, at=at, code="not_json") from None


def element_spans(span: Span, *, field: str, at: str) -> list[Span]:
    """The element spans of an array member: already there when the member was split."""
    if span.elements is not None:
        return span.elements
    return array_element_spans(span.raw, field=field, at=at)


def compact(value: Any) -> str:
    """The one serialisation of an accumulated (streamed) message: compact, UTF-8, keys in the
    order the stream gave them."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def expect(value: Any, kind: type | tuple[type, ...], *, field: str, at: str) -> Any:
    """``value`` if it has the expected JSON type, else a FormatError naming where."""
    if isinstance(value, bool) and kind in (int, (int, float)):
        raise FormatError(
            f"expected {_name(kind)}, got boolean", field=field, at=at, code="wrong_type"
        )
    if not isinstance(value, kind):
        raise FormatError(
            f"expected {_name(kind)}, got {json_type(value)}",
            field=field,
            at=at,
            code="wrong_type",
        )
    if kind is int and bounds.is_count_key(at.rsplit(".", 1)[-1]):
        # A count kept in a column (usage, max_tokens, budget_tokens): not negative, and
        # within the column (conversations/bounds.py).
        try:
            bounds.check_count(value)
        except bounds.OutOfBounds as exc:
            raise FormatError(exc.detail, field=field, at=at, code=exc.code) from None
    return value


# --- typed readers shared by the formats ------------------------------------------------------


def required(
    obj: dict[str, Any], key: str, kind: type | tuple[type, ...], *, field: str, at: str
) -> Any:
    """``obj[key]``, which must be there and be of ``kind``."""
    if key not in obj:
        raise FormatError(
            f"expected {key!r} ({_name(kind)}), but the key is missing",
            field=field,
            at=f"{at}.{key}",
            code="missing",
        )
    return expect(obj[key], kind, field=field, at=f"{at}.{key}")


def optional(
    obj: dict[str, Any], key: str, kind: type | tuple[type, ...], *, field: str, at: str
) -> Any:
    """``obj[key]`` when present and not null (then it must be of ``kind``), else None."""
    value = obj.get(key)
    return None if value is None else expect(value, kind, field=field, at=f"{at}.{key}")


def tool_arguments(text: str) -> Any:
    """Tool arguments as parsed JSON; the string itself when it does not parse (cut off), or
    holds a number JSON cannot carry (the Block keeps the text, never ``NaN``)."""
    try:
        return strict_loads(text)
    except (ValueError, RecursionError):
        return text


def take_answer(params: Params, answer: Params) -> None:
    """The answer's side of one call, copied from ``answer`` (the Params the response's or the
    stream's reader filled) onto the exchange's ``params`` (whose request side the request's
    reader filled): the served model, the response id, usage, the stop reason, the server tools
    counted, the truncated and refusal flags, a mid-stream error, the provider's verdict on the
    history."""
    params.response_model = answer.response_model
    params.response_id = answer.response_id
    params.usage = answer.usage
    params.stop_reason = answer.stop_reason
    params.server_tool_counts = answer.server_tool_counts
    params.truncated = answer.truncated
    params.refusal = answer.refusal
    params.stream_error = answer.stream_error
    params.input_transformations = answer.input_transformations


def body_members(text: Any, *, field: str) -> dict[str, Span]:
    """The top-level members of a JSON object body, each with its exact source text."""
    if not isinstance(text, str):
        raise FormatError(
            f"expected JSON text, got {type(text).__name__}", field=field, code="wrong_type"
        )
    try:
        return object_member_spans(text, field=field)
    except FormatError as exc:
        if exc.code != "wrong_type":
            raise
        expect(json.loads(text), dict, field=field, at="$")  # says what came instead
        raise


def compact_checked(
    value: Any, *, field: str, at: str, unicode_code: str = "invalid_unicode"
) -> str:
    """compact(), refusing what could not be stored as UTF-8 (a lone surrogate from a \\ud800
    escape) or serialised at all (nesting at the interpreter's limit)."""
    try:
        text = compact(value)
        text.encode("utf-8")
    except RecursionError:
        raise FormatError("JSON nested too deep", field=field, at=at, code="too_deep") from None
    except UnicodeEncodeError:
        raise FormatError(
            "a string holds a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape)",
            field=field,
            at=at,
            code=unicode_code,
        ) from None
    return text


def _name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(_json_type_name(k) for k in kinds)


def _json_type_name(k: type) -> str:
    return {
        dict: "object",
        list: "array",
        str: "string",
        int: "integer",
        float: "number",
        bool: "boolean",
    }.get(k, k.__name__)


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    return _json_type_name(type(value))


def opt_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
