"""The official SDKs' stream accumulators, each fed a raw SSE stream the way that SDK reads one.

- ``anthropic``: the SDK's ``SSEDecoder`` over the stream's bytes (cut into reads at ``cuts``),
  each event's data to ``accumulate_event`` (non-beta, and beta with no ``anthropic-beta``
  header), as ``MessageStream`` does: ``ping`` skipped, an ``error`` event ends the stream (the
  SDK raises there; the snapshot so far is what its caller holds). The HTTP stream also drops
  events without an ``event:`` line, which no Anthropic stream has; the recordings kept as bare
  ``data:`` lines are fed whole.
- ``openai`` Chat Completions: its ``SSEDecoder``, each chunk to ``ChatCompletionStreamState``
  (``[DONE]`` ends it, a chunk with ``error`` raises, chunks whose ``object`` is not
  ``chat.completion.chunk`` are skipped, as ``ChatCompletionStream`` does); the message is
  ``choices[index 0].message`` of the snapshot.
- ``openai`` Responses: each event to ``ResponseStreamState.handle_event``; the items are the
  ``response.completed`` event's output, or, for ``response.incomplete``/``failed`` (or a stream
  that stops at an ``error`` event), the items ``handle_event`` recovers for them.
- ``ai``: tests/conversations/formats/differential/node/harness.mjs (``readUIMessageStream``
  behind the default transport's parsing), all cases in one Node process.

Each returns an ``Outcome``: the accumulated message(s) as plain JSON values, or the error the
SDK raised.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
from anthropic._streaming import SSEDecoder as AnthropicSSEDecoder
from anthropic.lib.streaming._beta_messages import accumulate_event as beta_accumulate_event
from anthropic.lib.streaming._messages import accumulate_event
from openai import omit
from openai._models import construct_type
from openai._streaming import SSEDecoder as OpenAISSEDecoder
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.lib.streaming.responses._responses import ResponseStreamState
from openai.types.chat import ChatCompletionChunk
from openai.types.responses import ResponseStreamEvent

from tests.installs import exclusive

NODE_DIR = Path(__file__).resolve().parent / "node"
NODE_MAJOR = 20


@dataclass
class Outcome:
    messages: list[Any] | None = None  # None when the SDK raised
    error: str | None = None  # what it raised (or reported)
    notes: dict[str, Any] = field(default_factory=dict)  # extra facts (ai: the transport's error)


def byte_reads(text: str, cuts: Sequence[int]) -> Iterator[bytes]:
    """The stream's UTF-8 bytes in reads cut at ``cuts`` (byte offsets, ascending)."""
    data = text.encode("utf-8", "surrogatepass")
    start = 0
    for cut in [*cuts, len(data)]:
        if start < cut <= len(data):
            yield data[start:cut]
            start = cut


# --- anthropic -----------------------------------------------------------------------------------


def anthropic(text: str, cuts: Sequence[int] = (), *, beta: bool) -> Outcome:
    snapshot: Any = None
    buffers: dict[int, bytes] = {}
    notes: dict[str, Any] = {}
    try:
        for sse in AnthropicSSEDecoder().iter_bytes(byte_reads(text, cuts)):
            if sse.event == "ping" or not sse.data:
                continue
            data = sse.json()
            kind = data.get("type") if isinstance(data, dict) else None
            if sse.event == "error" or kind == "error":
                notes["error_event"] = True
                break
            if kind == "ping":
                continue
            if beta:
                snapshot = beta_accumulate_event(
                    event=data,
                    current_snapshot=snapshot,
                    json_bufs=buffers,
                    request_headers=httpx2.Headers(),
                )
            else:
                snapshot = accumulate_event(
                    event=data, current_snapshot=snapshot, json_bufs=buffers
                )
    except Exception as exc:  # the SDK's own failure is an outcome to compare
        return Outcome(error=f"{type(exc).__name__}: {exc}", notes=notes)
    if snapshot is None:
        return Outcome(messages=[], notes=notes)
    content = [_plain(block) for block in snapshot.content]
    return Outcome(messages=[{"role": "assistant", "content": content}], notes=notes)


def _plain(model: Any) -> Any:
    return model.to_dict(mode="python", exclude_unset=True, warnings=False)


# --- openai chat ---------------------------------------------------------------------------------


def openai_chat(text: str, cuts: Sequence[int] = (), *, helper: bool = True) -> Outcome:
    """``helper``: as ``client.chat.completions.stream()`` reads (chunks whose ``object`` is not
    ``chat.completion.chunk`` skipped); False: every chunk to the state, as a backend iterating
    ``create(stream=True)`` into a ``ChatCompletionStreamState`` does. ``notes`` hold the
    snapshot's ``id`` and ``model``."""
    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
    seen = False
    try:
        for sse in OpenAISSEDecoder().iter_bytes(byte_reads(text, cuts)):
            if sse.data.startswith("[DONE]"):
                break
            data = sse.json()
            if isinstance(data, dict) and data.get("error"):
                return Outcome(messages=_chat_message(state) if seen else [], error=None)
            chunk = construct_type(type_=ChatCompletionChunk, value=data)
            if helper and getattr(chunk, "object", None) != "chat.completion.chunk":
                continue
            state.handle_chunk(chunk)
            seen = True
    except Exception as exc:
        return Outcome(error=f"{type(exc).__name__}: {exc}")
    if not seen:
        return Outcome(messages=[])
    snapshot = state.current_completion_snapshot
    notes = {"id": snapshot.id, "model": snapshot.model}
    return Outcome(messages=_chat_message(state), notes=notes)


def _chat_message(state: ChatCompletionStreamState[Any]) -> list[Any]:
    for choice in state.current_completion_snapshot.choices:
        if choice.index == 0:
            return [_plain(choice.message)]
    return [{}]


# --- openai responses ----------------------------------------------------------------------------


def openai_responses(text: str, cuts: Sequence[int] = ()) -> Outcome:
    state: ResponseStreamState[Any] = ResponseStreamState(input_tools=omit, text_format=omit)
    started = False
    try:
        # A warning is not a failure: pydantic warns while the SDK serialises a tool of a type it
        # does not know (xAI's x_search), and the SDK goes on; under -W error it would raise.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            for sse in OpenAISSEDecoder().iter_bytes(byte_reads(text, cuts)):
                if sse.data.startswith("[DONE]"):
                    break
                data = sse.json()
                if isinstance(data, dict) and data.get("error"):
                    break  # the SDK raises APIError here
                event = construct_type(type_=ResponseStreamEvent, value=data)  # type: ignore[arg-type]
                for fired in state.handle_event(event):
                    kind = getattr(fired, "type", None)
                    if kind in ("response.completed", "response.incomplete", "response.failed"):
                        return Outcome(messages=[_plain(item) for item in fired.response.output])
                started = True
                if getattr(event, "type", None) == "error":
                    break
    except Exception as exc:
        return Outcome(error=f"{type(exc).__name__}: {exc}")
    if not started:
        return Outcome(messages=[])
    # Stopped at an error: what handle_event recovers for a failed response.
    done, added = state._completed_output, state._output_items
    items = [done[i] if i in done else added[i] for i in sorted(done.keys() | added.keys())]
    return Outcome(messages=[_plain(item) for item in items], notes={"error_event": True})


# --- ai (Node) -----------------------------------------------------------------------------------


def node_unavailable() -> str | None:
    """Why the AI SDK cannot run here (a skip reason), or None."""
    node = shutil.which("node")
    if node is None:
        return (
            "Node.js is not installed: the AI SDK (npm ai 6.x) side of the differential test "
            f"needs node >= {NODE_MAJOR} and npm on PATH"
        )
    version = subprocess.run(
        [node, "--version"], capture_output=True, text=True, check=False, timeout=30
    ).stdout.strip()
    try:
        major = int(version.lstrip("v").split(".")[0])
    except ValueError:
        major = 0
    if major < NODE_MAJOR:
        return f"Node.js {version or '?'} is too old for the AI SDK side: node >= {NODE_MAJOR}"
    if shutil.which("npm") is None:
        return "npm is not installed: it installs the AI SDK from node/package-lock.json"
    return None


def node_install() -> None:
    """``npm ci`` from the lockfile into node/node_modules, once per lockfile (a stamp file
    named after its hash). npm's own cache makes a reinstall fast."""
    lock = NODE_DIR / "package-lock.json"
    digest = hashlib.sha256(lock.read_bytes()).hexdigest()[:16]
    stamp = NODE_DIR / "node_modules" / f".installed-{digest}"
    if stamp.exists():
        return
    with exclusive(NODE_DIR / ".install.lock"):
        if not stamp.exists():
            _npm_ci(digest, stamp)


def _npm_ci(digest: str, stamp: Path) -> None:
    npm = shutil.which("npm")
    assert npm is not None
    done = subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--prefer-offline"],
        cwd=NODE_DIR,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        env={**os.environ, "npm_config_update_notifier": "false"},
    )
    if done.returncode != 0:
        raise RuntimeError(f"npm ci failed in {NODE_DIR}:\n{done.stdout}\n{done.stderr}")
    stamp.write_text(digest)


@dataclass
class AiCase:
    id: str
    sse: str
    message: Any = None  # the assistant message the stream continues, if any
    cuts: list[int] = field(default_factory=list)


def ai_sdk(cases: Iterable[AiCase]) -> tuple[str, dict[str, dict[str, Any]]]:
    """The AI SDK's version and, by case id, the harness's result (see harness.mjs)."""
    payload = {
        "cases": [{"id": c.id, "sse": c.sse, "message": c.message, "cuts": c.cuts} for c in cases]
    }
    node = shutil.which("node")
    assert node is not None
    done = subprocess.run(
        [node, str(NODE_DIR / "harness.mjs")],
        input=json.dumps(payload).encode("utf-8", "surrogatepass"),
        capture_output=True,
        check=False,
        timeout=600,
        cwd=NODE_DIR,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the AI SDK harness failed:\n{done.stderr.decode(errors='replace')}")
    out = json.loads(done.stdout)
    return out["version"], {r["id"]: r for r in out["results"]}
