"""Live forwarding (``instrument(..., live=True)``): each chunk of a streamed provider call is
posted to ``POST /api/v1/live/chunks`` as it arrives, so a supervisor can watch the answer
stream on the conversation page before taking the chat over.

Best effort, by design. A chunk is useful now or never: it is queued without blocking (a full
queue drops it, counted ``live_dropped``), posted once from this forwarder's own thread with the
console's timeouts, and never spooled or retried. The exchange posted when the response ends is
the record and carries every byte; it names the chunks' ``exchange`` key in ``live_exchange``,
which closes the live stream on the console. The chunks of one call keep their order (``seq``
from 0); the console holds a gap and ignores a duplicate. Chunks are sent as text: a character
cut between two chunks is sent with the later one (an incremental UTF-8 decoder); a stream that
is not UTF-8, or that is content-encoded (gzip: its bytes are not SSE text), is not forwarded.

Nothing here raises into the chat path.
"""

from __future__ import annotations

import codecs
import http.client
import json
import logging
import queue
import threading
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from ._capture import Capture
from ._wire import Wire

log = logging.getLogger("console_client")

LIVE_PATH = "/api/v1/live/chunks"
_STOP = object()


def chunk_body(capture: Capture, seq: int, text: str) -> bytes:
    """The ``POST /api/v1/live/chunks`` body of one chunk."""
    body: dict[str, Any] = {
        "conversation": capture.conversation.id,
        "customer": capture.conversation.customer,
        "format": capture.format,
        "exchange": capture.key,
        "seq": seq,
        "chunk": text,
        "at": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
    }
    if capture.conversation.labels:
        body["labels"] = dict(capture.conversation.labels)
    return json.dumps(body, ensure_ascii=False).encode("utf-8")


class Forwarder:
    """The live chunks of one console: a bounded queue and the thread that posts them."""

    def __init__(
        self,
        url: str,
        token: str,
        *,
        timeout: float,
        connect_timeout: float,
        queue_size: int,
        count: Callable[[str], None],
    ) -> None:
        self._token = token
        self._wire = Wire(url, timeout=timeout, connect_timeout=connect_timeout)
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=queue_size)
        self._count = count
        self._decoders: dict[str, Any] = {}
        # Chunks queued and chunks done (posted or given up), in queue order: the exchange of a
        # capture waits until its last chunk is done (``wait``).
        self._progress = threading.Condition()
        self._queued = 0
        self._done = 0
        self._thread = threading.Thread(target=self._run, name="console-client-live", daemon=True)
        self._thread.start()

    # --- The chat path (the tee) -------------------------------------------------------------

    def chunk(self, capture: Capture, data: bytes) -> None:
        """Queue one chunk of ``capture``'s stream (never blocks, never raises)."""
        try:
            decoder = self._decoders.get(capture.key)
            if decoder is None:
                decoder = self._decoders[capture.key] = codecs.getincrementaldecoder("utf-8")()
            try:
                text = decoder.decode(data)
            except UnicodeDecodeError:
                capture.live = False  # not UTF-8: the rest of this stream is not forwarded
                self._decoders.pop(capture.key, None)
                return
            if not text:
                return  # only the first bytes of a character: they go with the next chunk
            body = chunk_body(capture, capture.live_seq, text)
            capture.live_seq += 1
            with self._progress:
                self._queue.put_nowait(body)
                self._queued += 1
                capture.live_mark = self._queued
        except queue.Full:
            self._count("live_dropped")
        except Exception:
            log.exception("console_client: could not forward a live chunk")

    def done(self, capture: Capture) -> None:
        """The stream ended (or was closed): its decoder is dropped."""
        self._decoders.pop(capture.key, None)

    # --- The forwarder's thread -------------------------------------------------------------

    def _run(self) -> None:
        while True:
            body = self._queue.get()
            try:
                if body is _STOP:
                    return
                self._post(body)
            finally:
                with self._progress:
                    self._done += 1
                    self._progress.notify_all()

    def _post(self, body: bytes) -> None:
        try:
            answer = self._wire.request(
                "POST",
                LIVE_PATH,
                body=body,
                headers={
                    "Authorization": f"Bearer {self._token}",
                    "Content-Type": "application/json",
                    "User-Agent": "console-client/0.1",
                },
            )
        except (OSError, http.client.HTTPException) as exc:
            self._count("live_dropped")
            log.debug("console_client: a live chunk was not delivered: %s", exc)
            return
        except Exception:
            self._count("live_dropped")
            log.exception("console_client: a live chunk was not delivered")
            return
        if 200 <= answer.status < 300:
            self._count("live_sent")
        else:
            self._count("live_dropped")
            log.debug("console_client: the console refused a live chunk: %s", answer.status)

    def wait(self, mark: int, timeout: float | None) -> bool:
        """Until the chunk numbered ``mark`` (and every one before it) is done; False on time
        out."""
        with self._progress:
            return self._progress.wait_for(lambda: self._done >= mark, timeout)

    def close(self, timeout: float | None) -> None:
        """Let the queued chunks go (within ``timeout``), then stop the thread."""
        try:
            self._queue.put(_STOP, timeout=timeout)
        except queue.Full:
            return
        self._thread.join(timeout)
        self._wire.close()
