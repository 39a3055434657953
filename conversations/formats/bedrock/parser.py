"""Bedrock Converse (``bedrock.converse``): the request, a Converse JSON response or a
ConverseStream eventstream (``stream.py``), DESIGN section 19.

- history: one Message per element of the request's ``messages``, ``raw`` = its exact source
  text.
- output: one assistant Message. For a JSON response its ``raw`` is the exact source text of
  ``output.message`` (nothing re-serialised: reasoning text and signatures replay untouched).
  For a stream, the message is accumulated as the AWS SDKs' users build it from the events
  (``stream.py``) and serialised once with ``compact()``.
- params: the model (the endpoint's model id: an inference profile or an ARN kept as given), the
  thinking settings of ``additionalModelRequestFields``, ``inferenceConfig.maxTokens``; the stop
  reason, usage and the model a prompt router invoked (``trace.promptRouter.invokedModelId``).

Blocks are unions: the member is the type (``profile.kind_of``). ``text`` and
``citationsContent`` are VISIBLE; ``reasoningContent`` (``reasoningText`` {text, signature}, or
``redactedContent``) NEVER; ``toolUse``/``toolResult`` AUDIT; any other member (media,
``cachePoint``, ``guardContent``, a type newer than this code) is kept verbatim in ``raw`` and
carries nothing in its Block: hidden, fail closed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...blocks import Block, Params, ParsedExchange
from ..profile import Endpoint
from ..registry import Format
from ..traces import Trace, TraceKind, Withheld
from .content import parse_request, parse_response
from .profile import FORMAT, kind_of
from .stream import parse_stream


class BedrockConverse(Format):
    name = FORMAT
    binary_stream = True

    def read(
        self,
        *,
        request: str,
        response: str | None,
        stream: str | None,
        endpoint: Endpoint | None,
        cancelled: bool,
    ) -> ParsedExchange:
        params = Params()
        history = parse_request(request, params)
        assert response is not None  # a text stream is refused by the preamble (stream_kind)
        return ParsedExchange(
            history=history, output=[parse_response(response, params)], params=params
        )

    def read_binary(
        self, *, request: str, data: bytes, endpoint: Endpoint | None, cancelled: bool
    ) -> ParsedExchange:
        params = Params()
        history = parse_request(request, params)
        output = parse_stream(data, params, cancelled=cancelled)
        return ParsedExchange(history=history, output=output, params=params)

    def message_blocks(self, raw: str) -> tuple[Block, ...]:
        return parse_request('{"messages":[' + raw + "]}", Params())[0].blocks

    def reasoning(self, message: Any) -> Iterator[Trace]:
        """``reasoningContent`` blocks: the reasoning text; "redacted by provider" for
        ``redactedContent``; "omitted by provider" for a text left empty beside a signature."""
        content = message.get("content") if isinstance(message, dict) else None
        for item in content if isinstance(content, list) else ():
            if kind_of(item) != "reasoningContent" or not isinstance(item[kind_of(item)], dict):
                continue
            body = item["reasoningContent"]
            text = body.get("reasoningText")
            if "redactedContent" in body:
                yield Trace(TraceKind.THINKING, withheld=Withheld.REDACTED)
            elif isinstance(text, dict) and isinstance(text.get("text"), str) and text["text"]:
                yield Trace(TraceKind.THINKING, text["text"])
            elif isinstance(text, dict) and text.get("signature"):
                yield Trace(TraceKind.THINKING, withheld=Withheld.OMITTED)
