"""Provider calls through the real SDKs, shared by the tests and by a child process running
older SDK releases (built on ``httpx`` instead of ``httpx2``). No Django here: the child imports
this module with only the client package, the SDKs and the console's format kits (pure: each
kit's ``sdk`` says how to make its SDK's client and call it).

    python -m tests.client.calls < plan.json   # prints {"library": ..., "counters": {...}}
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import sys
from dataclasses import dataclass
from typing import Any

import console_client
from console_client import _http_clients

from conversations.formats import formats, get


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


# The SDK clients' options in the tests that build their own (the kits' clients use the same).
COMMON: dict[str, Any] = {"api_key": "sk-fake", "max_retries": 0, "timeout": 30.0}


def sdk_formats() -> list[str]:
    """The formats whose kit says how to drive the provider's official Python SDK."""
    return [f.name for f in formats() if f.kit.sdk is not None]


def _sdk(fmt: str) -> Any:
    sdk = get(fmt).kit.sdk
    if sdk is None:
        raise ValueError(f"{fmt}: no Python SDK in its kit")
    return sdk


def sync_clients(provider_url: str, fmts: list[str] | None = None) -> dict[str, Any]:
    """A client of each format's SDK, pointed at the fake provider, without retries (a retry
    would hide what the test looks at)."""
    return {fmt: _sdk(fmt).client(provider_url, False) for fmt in fmts or sdk_formats()}


def async_clients(provider_url: str, fmts: list[str] | None = None) -> dict[str, Any]:
    return {fmt: _sdk(fmt).client(provider_url, True) for fmt in fmts or sdk_formats()}


def sync_call(client: Any, call: Call) -> list[Any]:
    """The SDK's answer: the events of a stream, read to the end, or the one response."""
    answer: list[Any] = _sdk(call.format).call(client, call.model, call.question, call.streamed)
    return answer


async def async_call(client: Any, call: Call) -> list[Any]:
    answer: list[Any] = await _sdk(call.format).call(
        client, call.model, call.question, call.streamed
    )
    return answer


def versions(fmts: list[str]) -> dict[str, str]:
    """The installed version of each format's SDK distribution."""
    return {_sdk(f).package: importlib.metadata.version(_sdk(f).package) for f in fmts}


def run(calls: list[Call], provider_url: str, *, url: str, token: str, **options: Any) -> Any:
    """Each call inside its conversation: the sync ones in order, then the async ones together
    (each task in its own conversation). Returns the SDK's answers and which HTTP library and
    transport the SDK clients used."""
    answers: dict[int, list[Any]] = {}
    info: dict[str, str] = {}
    fmts = sorted({c.format for c in calls})
    sdk = {
        k: console_client.instrument(v, url=url, token=token, **options)
        for k, v in sync_clients(provider_url, fmts).items()
    }
    http = _http_clients(next(iter(sdk.values())))[0]
    info["library"] = type(http).__mro__[-2].__module__.partition(".")[0]
    info["transport"] = type(http._transport).__name__
    try:
        for i, call in enumerate(calls):
            if not call.asynchronous:
                with console_client.conversation(
                    call.conversation, customer=call.customer, labels=call.labels
                ):
                    answers[i] = sync_call(sdk[call.format], call)
    finally:
        for client in sdk.values():
            client.close()

    async def all_async() -> None:
        clients = {
            k: console_client.instrument(v, url=url, token=token, **options)
            for k, v in async_clients(provider_url, fmts).items()
        }

        async def one(i: int, call: Call) -> None:
            with console_client.conversation(
                call.conversation, customer=call.customer, labels=call.labels
            ):
                answers[i] = await async_call(clients[call.format], call)

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
                "versions": versions(sorted({c.format for c in calls})),
                "answers": [len(a) for a in answers],
                "delivered": delivered,
                "counters": console_client.counters().as_dict(),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
