"""Capture every provider exchange of a chat backend, byte for byte, for the support console.

    client = console_client.instrument(anthropic.Anthropic(), url=CONSOLE_URL, token=TOKEN)
    with console_client.conversation("c-1", customer="u-9", labels={"queue": "billing"}):
        client.messages.create(...)

``instrument`` wraps the transport of the SDK client's own HTTP client (httpx2 or httpx): the
request bytes as sent and the response bytes (or SSE text) as received are captured while the SDK
reads them, and posted to ``POST /api/v1/exchanges`` from a background thread (``_delivery``).
Provider calls outside ``conversation()`` are not captured (counted as ``uncaptured``).

The guide is ``docs/client.md`` in the console's repository. Which calls are exchanges, and
where an SDK keeps its HTTP client, is ``_capture_table.py``, generated from the console's format
registry: a provider format added to the console needs no edit here. An SDK built on httpx2/httpx
whose HTTP client sits elsewhere: pass that HTTP client itself to ``instrument``.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from . import _botocore
from ._capture_table import HTTP_CLIENTS
from ._context import Conversation, conversation
from ._delivery import Console, Counters, Options
from ._history import ConsoleError, ConversationNotFound, History
from ._history import history as _history
from ._http import library_of
from ._transport import install

__all__ = [
    "Console",
    "ConsoleError",
    "Conversation",
    "ConversationNotFound",
    "Counters",
    "History",
    "console",
    "conversation",
    "counters",
    "flush",
    "history",
    "instrument",
    "shutdown",
]

__version__ = "0.1.0"

C = TypeVar("C")

_consoles: dict[tuple[str, str], Console] = {}
_lock = threading.Lock()


def _check_url(url: object) -> str:
    if not isinstance(url, str):
        raise TypeError("console_client: url must be a str")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"console_client: url must be http(s)://host[:port], not {url!r}")
    return url.rstrip("/")


def _check_token(token: object) -> str:
    if not isinstance(token, str) or not token:
        raise ValueError("console_client: token must be a non-empty str (a service token)")
    return token


def console(
    *,
    url: str,
    token: str,
    spool_dir: str | Path | None = None,
    timeout: float = 5.0,
    connect_timeout: float = 2.0,
    queue_size: int = 1000,
    spool_max_files: int = 10_000,
    spool_max_bytes: int = 256 * 1024 * 1024,
    max_attempts: int = 20,
    retries_before_spool: int = 2,
    backoff: float = 0.25,
    backoff_max: float = 30.0,
    exit_timeout: float = 2.0,
    live: bool = False,
    live_queue_size: int = 10_000,
) -> Console:
    """The ``Console`` for ``url`` and ``token``: made on first use, the same one afterwards
    (its options are those of the first call)."""
    key = (_check_url(url), _check_token(token))
    with _lock:
        found = _consoles.get(key)
        if found is None:
            options = Options(
                timeout=timeout,
                connect_timeout=connect_timeout,
                queue_size=queue_size,
                spool_dir=Path(spool_dir) if spool_dir is not None else None,
                spool_max_files=spool_max_files,
                spool_max_bytes=spool_max_bytes,
                max_attempts=max_attempts,
                retries_before_spool=retries_before_spool,
                backoff=backoff,
                backoff_max=backoff_max,
                exit_timeout=exit_timeout,
                live=live,
                live_queue_size=live_queue_size,
            )
            found = _consoles[key] = Console(key[0], key[1], options)
        return found


def _http_clients(client: Any) -> list[Any]:
    """The httpx2/httpx clients of ``client``: itself, or those its SDK keeps where the capture
    table's ``HTTP_CLIENTS`` say (``_client``; ``_api_client._httpx_client``...)."""
    if library_of(client) is not None:
        return [client]
    found: list[Any] = []
    for path in HTTP_CLIENTS:
        target: Any = client
        for part in path.split("."):
            target = getattr(target, part, None)
            if target is None:
                break
        known = target is not None and library_of(target) is not None
        if known and all(target is not other for other in found):
            found.append(target)
    return found


def instrument(client: C, *, url: str, token: str, **options: Any) -> C:
    """Capture the exchanges of ``client`` (a provider SDK's client built on httpx2/httpx:
    ``anthropic.Anthropic``/``AsyncAnthropic``, ``openai.OpenAI``/``AsyncOpenAI``, the SDKs of
    every format the console knows; an ``httpx2``/``httpx`` client; or a botocore client, such
    as ``boto3.client("bedrock-runtime")``, through its event hooks) for the console at
    ``url``, posted with the service ``token``. Returns ``client`` itself, instrumented in place
    (copies made with ``with_options`` share its HTTP client, so they are instrumented too).

    ``options`` are those of ``console()``: ``spool_dir`` (default
    ``~/.cache/console-client/<hash of url>``), ``timeout`` and ``connect_timeout`` (seconds, per
    post), ``queue_size``, ``spool_max_files``, ``spool_max_bytes``, ``max_attempts``,
    ``retries_before_spool``, ``backoff``, ``backoff_max``, ``exit_timeout``; ``live=True``
    forwards each streamed response chunk by chunk as it arrives (``POST /api/v1/live/chunks``,
    best effort, ``live_queue_size`` chunks queued at most), so the console shows it live.
    """
    if _botocore.is_botocore_client(client):
        _botocore.install(client, console(url=url, token=token, **options))
        return client
    http_clients = _http_clients(client)
    if not http_clients:
        raise TypeError(
            f"console_client.instrument: {type(client).__name__} is not the client of a provider "
            "SDK the console knows (nor an httpx2/httpx client)"
        )
    target = console(url=url, token=token, **options)
    for http_client in http_clients:
        lib = library_of(http_client)
        assert lib is not None
        install(http_client, lib, target)
    return client


def flush(timeout: float | None = 10.0) -> bool:
    """Deliver what every console has queued or spooled, within ``timeout`` seconds in all.
    What is still queued then goes to the spool. True when nothing is left."""
    import time

    deadline = None if timeout is None else time.monotonic() + timeout
    done = True
    for target in list(_consoles.values()):
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        done = target.flush(left) and done
    return done


def counters() -> Counters:
    """The counters of every console of this process, added up."""
    totals = dict.fromkeys(Counters().as_dict(), 0)
    for target in list(_consoles.values()):
        for name, value in target.counters().as_dict().items():
            totals[name] += value
    return Counters(**totals)


def shutdown(timeout: float | None = 10.0) -> bool:
    """Flush and stop every console (their threads end); instrumented clients keep working,
    their later exchanges dropped and counted. For the end of a process or a test."""
    with _lock:
        targets = list(_consoles.values())
        _consoles.clear()
    done = True
    for target in targets:
        done = target.close(timeout) and done
    return done


def history(
    conversation: str,
    *,
    url: str | None = None,
    token: str | None = None,
    timeout: float = 10.0,
    for_continuation: bool = False,
) -> History:
    """The replay of ``conversation`` (``GET /api/v1/conversations/{id}/messages``): ``.raw``
    the body byte for byte, ``.raw_messages`` each element's bytes, ``.messages`` parsed.
    ``url`` and ``token`` default to those of the one console ``instrument`` was given.
    ``for_continuation=True``: what the provider needs to continue the conversation (earlier
    turns' reasoning left out where the provider does not need it, an open tool loop kept
    unmodified); ``.left_out_elements`` and ``.left_out_bytes`` say what was left out.

    Exchanges still queued are not in it yet: ``flush()`` first when that matters.
    """
    if url is None or token is None:
        if len(_consoles) != 1:
            raise ValueError("console_client.history: give url= and token=")
        ((default_url, default_token),) = _consoles
        url = default_url if url is None else url
        token = default_token if token is None else token
    return _history(
        conversation,
        url=_check_url(url),
        token=_check_token(token),
        timeout=timeout,
        for_continuation=for_continuation,
    )
