"""What a format package's ``kit.py`` declares (DESIGN section 19): the samples that the generic
tests, the demo and the API page need, so a new format is tested, demonstrated and documented
without a table outside its package naming it.

Each package's ``kit.py`` defines ``KIT = Kit(...)`` and its ``__init__.py`` registers it with
the format (``register(..., kit=KIT)``); the registry refuses a format without a kit, or with a
kit of another format or one lacking a part (``Kit.missing``). What each part is for:

- ``minimal_request``: the smallest request the format accepts (for a recording that kept only
  the response; the live tests' stored first exchange);
- ``example``: the ingest body the API page shows for the format (``ingest/examples.py``); it
  must be stored (201), and its ``conversation`` is the format's own;
- ``demo(facts)``: one demo conversation's exchanges, in order (``conversations/demo.py``
  gives the facts of a support case and the times); ``demo_twists``: which of ``DEMO_TWISTS``
  (a truncated or refused answer, a repeated call, a failed tool, a rewritten history) it can
  word when the facts ask for one;
- ``reasoning``: a stored message with reasoning and what the format's reader reads from it;
- ``finish(raw)``: an exchange whose answer ends with the raw stop value ``raw``, for every
  value of the profile's finish table;
- ``live``: a few live events (a chunk that shows nothing, a stream of given text deltas);
- ``fixtures``: the format's recorded payloads under ``tests/fixtures/`` (glob patterns);
- ``sdk``: how the client tests drive the provider's official Python SDK, for a format the
  chat backend's Python client captures;
- ``recorded``: the format's recorded exchanges, where the generic loaders cannot read its
  fixtures (a binary stream's).

Pure: no Django (an SDK is imported only when a test calls ``sdk.client``).
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class Sample:
    """One exchange as the ingest body carries it: the request, exactly one of ``response``,
    ``stream`` and ``stream_base64``, and the ``endpoint`` where the format reads one."""

    request: str
    response: str | None = None
    stream: str | None = None
    stream_base64: str | None = None
    endpoint: str | None = None

    def fields(self) -> dict[str, str]:
        """The ingest body's fields this sample sets."""
        out = {"request": self.request}
        for name in ("response", "stream", "stream_base64", "endpoint"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        return out

    def parse_args(self) -> dict[str, Any]:
        """Keyword arguments of ``Format.parse`` for this sample."""
        return {
            "request": self.request,
            "response": self.response,
            "stream": self.stream,
            "stream_base64": self.stream_base64,
            "endpoint": self.endpoint,
        }


class DemoFacts(Protocol):
    """The facts of one demo support case (``conversations/demo.py``): a kit's ``demo`` words
    its conversation from these, in its format."""

    conversation: str
    order: str
    question: str
    thinking: str
    answer: str
    # "" for an ordinary case, or one of ``DEMO_TWISTS`` the kit declares in ``demo_twists``.
    twist: str

    def tool_result(self) -> dict[str, Any]:
        """What the order lookup returned (drawn afresh: call it once per exchange)."""
        ...


# What can go wrong in a demo case, so that the signals' pages and every alert have something to
# show on a fresh demo: an answer cut off (truncated) or refused, the same tool call repeated in
# one answer (looping), a tool failing (tool_error), a history the backend rewrote (rewritten).
# A kit words those its format can (``Kit.demo_twists``); a slow answer is the demo's own
# (``conversations/demo.py`` sets the latency).
DEMO_TWISTS = ("truncated", "refused", "looping", "tool_error", "rewritten")


@dataclass(frozen=True, slots=True)
class ReasoningSample:
    """A stored message (parsed JSON) holding reasoning, and the texts the format's reasoning
    reader reads from it, in order."""

    message: Any
    texts: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class LiveSample:
    """A few live events of the format, as ``POST /api/v1/live/chunks`` carries them.
    ``idle``: a chunk the live filter reads that shows nothing (a ping, a start);
    ``text(deltas)``: a whole stream whose answer is ``deltas``, each in its own event, then
    the format's ordinary end; ``frame(data)``: one event whose JSON text is ``data``, as a
    chunk (an SSE ``data:`` line unless the format frames its stream otherwise). For a format
    whose streams are binary, every chunk here is base64 (the live API's ``chunk_base64``)."""

    idle: str
    text: Callable[[Sequence[str]], str]
    framed: Callable[[str], str] | None = None

    def frame(self, data: str) -> str:
        return self.framed(data) if self.framed is not None else f"data: {data}\n\n"


@dataclass(frozen=True, slots=True)
class Fixture:
    """Recorded payloads of the format: files under ``tests/fixtures/`` matching ``pattern``
    (``providers/*__anthropic*``), and, for files holding only an answer, the file of the
    request they answer (``request``, under ``tests/fixtures/`` too), else the kit's
    ``minimal_request``."""

    pattern: str
    request: str | None = None

    def matches(self, path: str) -> bool:
        return fnmatch.fnmatchcase(path, self.pattern)


@dataclass(frozen=True, slots=True)
class PythonSdk:
    """How the client tests drive the provider's official Python SDK against a fake provider:
    ``client(base_url, asynchronous)`` makes a client pointed at it (the SDK imported when
    called); ``call(client, model, question, streamed)`` makes one call and returns the SDK's
    answer, a stream read to its end (a list of its events) or the one response (a coroutine
    for an async client)."""

    package: str  # the SDK's distribution, "anthropic"
    client: Callable[[str, bool], Any]
    call: Callable[[Any, str, str, bool], Any]


def sdk_create(method: str, arguments: Callable[[str, str], dict[str, Any]]) -> Callable[..., Any]:
    """A ``PythonSdk.call`` for an SDK whose call is ``client.<method>.create(**arguments)``,
    streamed with ``stream=True`` (the ``anthropic`` and ``openai`` SDKs): ``arguments(model,
    question)`` are the call's keyword arguments."""

    def create(client: Any) -> Any:
        target = client
        for part in method.split("."):
            target = getattr(target, part)
        return target.create

    def call(client: Any, model: str, question: str, streamed: bool) -> Any:
        kwargs = arguments(model, question)
        if _is_async(client):
            return _async_call(create(client), kwargs, streamed)
        if streamed:
            with create(client)(stream=True, **kwargs) as stream:
                return list(stream)
        return [create(client)(**kwargs)]

    return call


def _is_async(client: Any) -> bool:
    return type(client).__name__.startswith("Async")


async def _async_call(create: Any, kwargs: dict[str, Any], streamed: bool) -> list[Any]:
    if streamed:
        stream = await create(stream=True, **kwargs)
        async with stream:
            return [event async for event in stream]
    return [await create(**kwargs)]


def sse(events: Sequence[Mapping[str, Any]], *, done: bool = False) -> str:
    """Events as SSE text, one ``data:`` line each (``done``: then ``data: [DONE]``)."""
    text = "".join(f"data: {json.dumps(e)}\n\n" for e in events)
    return text + ("data: [DONE]\n\n" if done else "")


def json_text(value: Any) -> str:
    """A body as the chat backend would send it: compact JSON."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class Kit:
    format: str
    minimal_request: Mapping[str, Any]
    example: Mapping[str, Any]  # a whole ingest body
    demo: Callable[[DemoFacts], list[Sample]]
    reasoning: ReasoningSample
    finish: Callable[[str], Sample]
    live: LiveSample
    fixtures: tuple[Fixture, ...] = ()
    sdk: PythonSdk | None = None
    # The ``DEMO_TWISTS`` this kit's ``demo`` words (for the facts' ``twist``); others ignored.
    demo_twists: frozenset[str] = frozenset()
    # The format's recorded exchanges, each named, where the generic loaders (tests/providers.py:
    # SSE text and JSON) do not read its fixtures (a binary stream's recordings).
    recorded: Callable[[], list[tuple[str, Sample]]] | None = None

    def fixture(self, path: str) -> Fixture | None:
        """The fixture entry ``path`` (relative to ``tests/fixtures/``) belongs to, or None."""
        return next((f for f in self.fixtures if f.matches(path)), None)

    def missing(self) -> list[str]:
        """The parts this kit lacks (the registry refuses a format with any)."""
        out = []
        if not self.minimal_request:
            out.append("minimal_request")
        if not self.example or self.example.get("format") != self.format:
            out.append("example (an ingest body of this format)")
        if not self.reasoning.texts:
            out.append("reasoning (what the reader reads from the sample)")
        if not self.live.idle:
            out.append("live (an idle chunk)")
        if not self.demo_twists <= set(DEMO_TWISTS):
            out.append(f"demo_twists (only {', '.join(DEMO_TWISTS)})")
        return out
