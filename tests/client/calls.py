"""Provider calls through the real SDKs, shared by the tests and by a child process running
older SDK releases (built on ``httpx`` instead of ``httpx2``). No Django here: the child imports
this module with only the client package and the SDKs.

    python -m tests.client.calls < plan.json   # prints {"library": ..., "counters": {...}}
"""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import dataclass
from typing import Any

import anthropic
import console_client
import openai


@dataclass(frozen=True)
class Call:
    conversation: str
    customer: str
    format: str
    model: str
    streamed: bool
    labels: dict[str, Any] | None = None
    asynchronous: bool = False

    @property
    def question(self) -> str:
        return f"Where is my parcel? ({self.model})"


COMMON: dict[str, Any] = {"api_key": "sk-fake", "max_retries": 0, "timeout": 30.0}


def sync_clients(provider_url: str) -> dict[str, Any]:
    """Clients of both SDKs, pointed at the fake provider, without retries (a retry would hide
    what the test looks at)."""
    return {
        "anthropic": anthropic.Anthropic(base_url=provider_url, **COMMON),
        "openai": openai.OpenAI(base_url=provider_url + "/v1", **COMMON),
    }


def async_clients(provider_url: str) -> dict[str, Any]:
    return {
        "anthropic-async": anthropic.AsyncAnthropic(base_url=provider_url, **COMMON),
        "openai-async": openai.AsyncOpenAI(base_url=provider_url + "/v1", **COMMON),
    }


def _request(call: Call) -> tuple[str, dict[str, Any]]:
    """(the SDK method's path, its arguments)."""
    if call.format == "anthropic.messages":
        messages = [{"role": "user", "content": call.question}]
        return "messages", {"model": call.model, "max_tokens": 1024, "messages": messages}
    if call.format == "openai.responses":
        return "responses", {
            "model": call.model,
            "input": [{"role": "user", "content": call.question}],
        }
    if call.format == "openai.chat":
        messages = [{"role": "user", "content": call.question}]
        return "chat.completions", {"model": call.model, "messages": messages}
    raise ValueError(call.format)


def _method(client: Any, path: str) -> Any:
    target = client
    for part in path.split("."):
        target = getattr(target, part)
    return target.create


def sync_call(client: Any, call: Call) -> list[Any]:
    """The SDK's answer: the events of a stream, read to the end, or the one response."""
    path, kwargs = _request(call)
    if call.streamed:
        with _method(client, path)(stream=True, **kwargs) as stream:
            return list(stream)
    return [_method(client, path)(**kwargs)]


async def async_call(client: Any, call: Call) -> list[Any]:
    path, kwargs = _request(call)
    if call.streamed:
        stream = await _method(client, path)(stream=True, **kwargs)
        async with stream:
            return [event async for event in stream]
    return [await _method(client, path)(**kwargs)]


def sdk_of(call: Call) -> str:
    name = "anthropic" if call.format.startswith("anthropic") else "openai"
    return name + ("-async" if call.asynchronous else "")


def run(calls: list[Call], provider_url: str, *, url: str, token: str, **options: Any) -> Any:
    """Each call inside its conversation: the sync ones in order, then the async ones together
    (each task in its own conversation). Returns the SDK's answers and which HTTP library and
    transport the SDK clients used."""
    answers: dict[int, list[Any]] = {}
    info: dict[str, str] = {}
    sdk = {
        k: console_client.instrument(v, url=url, token=token, **options)
        for k, v in sync_clients(provider_url).items()
    }
    http = sdk["anthropic"]._client
    info["library"] = type(http).__mro__[-2].__module__.partition(".")[0]
    info["transport"] = type(http._transport).__name__
    try:
        for i, call in enumerate(calls):
            if not call.asynchronous:
                with console_client.conversation(
                    call.conversation, customer=call.customer, labels=call.labels
                ):
                    answers[i] = sync_call(sdk[sdk_of(call)], call)
    finally:
        for client in sdk.values():
            client.close()

    async def all_async() -> None:
        clients = {
            k: console_client.instrument(v, url=url, token=token, **options)
            for k, v in async_clients(provider_url).items()
        }

        async def one(i: int, call: Call) -> None:
            with console_client.conversation(
                call.conversation, customer=call.customer, labels=call.labels
            ):
                answers[i] = await async_call(clients[sdk_of(call)], call)

        try:
            await asyncio.gather(*(one(i, c) for i, c in enumerate(calls) if c.asynchronous))
        finally:
            for client in clients.values():
                await client.close()

    if any(c.asynchronous for c in calls):
        asyncio.run(all_async())
    return [answers[i] for i in range(len(calls))], info


def main() -> int:
    plan = json.load(sys.stdin)
    calls = [Call(**c) for c in plan["calls"]]
    answers, info = run(
        calls, plan["provider_url"], url=plan["url"], token=plan["token"], **plan["options"]
    )
    delivered = console_client.flush(timeout=60)
    print(
        json.dumps(
            {
                **info,
                "versions": {"anthropic": anthropic.__version__, "openai": openai.__version__},
                "answers": [len(a) for a in answers],
                "delivered": delivered,
                "counters": console_client.counters().as_dict(),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
