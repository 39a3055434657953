"""Realistic demo exchanges in every provider format, shaped like the recorded fixtures.

``demo_bodies(n)`` yields ``POST /api/v1/exchanges`` bodies (dicts) for ``n`` conversations of
customer support with reasoning models that call tools: an order lookup, a refund, a tracking
question, in every registered format in turn. This module draws the case (who, which order,
what was asked, thought and answered, when) and the times; each format's kit
(``formats/<name>/kit.py``, ``demo``) words the conversation in its own protocol. Used by
``seed_demo`` and by the benchmarks (the same bodies the API would receive).

**In the present**: the conversations are spread over the ``days`` before ``until`` (default:
the 29 days before today, 00:00 UTC, so every one is inside the signals' 30 days whenever in the
day the demo is loaded), in a scattered order, far enough apart that a million stay distinct.

**Twists**: every fourth conversation (``TWIST_EVERY``), after one ordinary conversation of each
format, goes wrong in one of the ways the signals watch, in turn (``formats.kit.DEMO_TWISTS``,
and a slow answer): worded by the format whose kit words the most twists, in the queue
``TWIST_QUEUE`` only, so the demo's alert rules (``seed_demo``) each fire once, on that one
queue and snapshot.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from .formats import formats
from .formats.kit import DEMO_TWISTS, Sample

FIRST = [
    "Ana",
    "Ben",
    "Chloé",
    "Dmitri",
    "Eva",
    "Farah",
    "Gus",
    "Hana",
    "Ivo",
    "Jules",
    "Kofi",
    "Lena",
]
LAST = ["Moreau", "Okafor", "Schmidt", "Tanaka", "Silva", "Novak", "Haddad", "Larsen", "Rossi"]
QUEUES = ["billing", "shipping", "returns", "technical"]
# The queue of the conversations that go wrong (see the module's docstring).
TWIST_QUEUE = "priority"
TWIST_EVERY = 4
SLOW = "slow"  # a twist every format can show: the demo sets the latency
TWISTS = (*DEMO_TWISTS, SLOW)
# Minutes between consecutive conversations' starts, modulo the span: a prime, so a million
# conversations land on distinct minutes in turn (the span is never a multiple of it).
SCATTER = 10_007
CARRIERS = ["DHL", "UPS", "La Poste", "PostNL"]
STATUSES = ["shipped", "processing", "delivered", "delayed"]

QUESTIONS = [
    "Hi, where is my order {order}? It was supposed to arrive on Monday. My email is {email}.",
    "Hello, I was charged twice for order {order}. Can you check? You can call me on {phone}.",
    "My parcel {order} says delivered but I never got it. I'm at {email}.",
    "Can I still change the delivery address for {order}? Phone: {phone}",
]
THINKING = [
    "The customer asks about order {order}. I should look it up before answering "
    "and not guess the status.",
    "Two charges on {order}: check the payment records first, then explain the refund timeline.",
]
ANSWERS = [
    "Your order {order} is {status} with {carrier}; tracking number {tracking}. "
    "It should arrive within two days.",
    "I checked order {order}: it is {status}. I've opened a refund for the duplicate charge; "
    "it takes 3 to 5 business days.",
]


def twist_of(index: int, *, plain: int = 0) -> str:
    """The twist of the demo's ``index``-th conversation ("" for most, and for the first
    ``plain``: one ordinary conversation of each format comes first)."""
    if index < plain or index % TWIST_EVERY != TWIST_EVERY - 1:
        return ""
    return TWISTS[(index // TWIST_EVERY) % len(TWISTS)]


class _Scenario:
    def __init__(
        self, rng: random.Random, index: int, first_at: datetime, minutes: int, plain: int
    ) -> None:
        self.rng = rng
        first, last = rng.choice(FIRST), rng.choice(LAST)
        self.customer = f"cus_{index:06d}"
        self.conversation = f"conv_{index:06d}_{rng.randrange(16**6):06x}"
        self.order = f"ORD-{rng.randrange(10**6, 10**7)}"
        self.email = f"{first.lower()}.{last.lower()}@example.com".replace("é", "e")
        self.phone = "+33 6 " + " ".join(str(rng.randrange(10, 99)) for _ in range(4))
        self.status = rng.choice(STATUSES)
        self.carrier = rng.choice(CARRIERS)
        self.tracking = f"1Z{rng.randrange(16**10):010X}"
        self.queue = rng.choice(QUEUES)
        self.question = rng.choice(QUESTIONS).format(**self.__dict__)
        self.thinking = rng.choice(THINKING).format(**self.__dict__)
        self.answer = rng.choice(ANSWERS).format(**self.__dict__)
        self.twist = twist_of(index, plain=plain)
        if self.twist:
            self.queue = TWIST_QUEUE
        # Scattered over the span (its last 10 minutes left for the exchanges' own steps).
        self.started = first_at + timedelta(minutes=(SCATTER * index) % max(1, minutes - 10))

    def tool_result(self) -> dict[str, Any]:
        return {
            "order_id": self.order,
            "status": self.status,
            "carrier": self.carrier,
            "tracking_id": self.tracking,
            "shipping_address": f"{self.rng.randrange(1, 200)} rue de la Paix, 75002 Paris",
            "customer_email": self.email,
        }

    def body(self, fmt: str, sample: Sample, step: int) -> dict[str, Any]:
        return {
            "conversation": self.conversation,
            "customer": self.customer,
            "format": fmt,
            **sample.fields(),
            "started_at": (self.started + timedelta(seconds=40 * step)).isoformat(),
            "latency_ms": self.rng.randrange(45_000, 60_000)
            if self.twist == SLOW
            else self.rng.randrange(800, 9000),
            "labels": {"queue": self.queue},
        }


def demo_bodies(
    n: int,
    *,
    seed: int = 7,
    start: int = 0,
    until: datetime | None = None,
    days: int = 29,
) -> Iterator[dict[str, Any]]:
    """Exchange bodies for ``n`` conversations, in order, each conversation's exchanges in turn,
    started over the ``days`` before ``until`` (default: today, 00:00 UTC; see the docstring)."""
    if until is None:
        until = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    minutes = max(1, int(days * 24 * 60))
    first_at = until - timedelta(minutes=minutes)
    rng = random.Random(seed)
    rotation = formats()  # every registered format in turn, by name
    # The conversations that go wrong, in the format that words the most twists (one snapshot).
    twisted = max(rotation, key=lambda f: len(f.kit.demo_twists))
    for index in range(start, start + n):
        scenario = _Scenario(rng, index, first_at, minutes, plain=len(rotation))
        fmt = rotation[index % len(rotation)]
        if scenario.twist and scenario.twist != SLOW:
            fmt = twisted if scenario.twist in twisted.kit.demo_twists else fmt
        elif scenario.twist == SLOW:
            fmt = twisted
        for step, sample in enumerate(fmt.kit.demo(scenario)):
            yield scenario.body(fmt.name, sample, step)
