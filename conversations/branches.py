"""A conversation as a tree of messages (DESIGN section 20): each exchange's path, and where
paths branch. Pure: no Django, no model (ingest's matching stage, the selectors and replay read
it; ``tests/conversations/test_branches.py`` holds it to its rules without a database).

An exchange's **path** is the history it sent, as the stored messages it matched (their sequence
numbers), then its answer. A path is kept as a step from another exchange's path (``Node``):
``parent``, the ordinal of the exchange whose path it continues or leaves; ``kept``, how many of
that path's messages it keeps; ``added``, the sequence numbers that follow them. A conversation
that never branches is a chain: each exchange keeps its parent's whole path and adds its
request's new messages and its answer.

A **branch** starts where a request leaves the previous request's path at a position (``at``,
counted from 0) and goes on from there without sending the rest of it back; ingest's matching
stage (``ingest/history.py``) decides, and records one of ``BRANCHES``:

- ``regenerated``: the same history without the answer at ``at`` (a chat's "regenerate");
- ``edited``: the customer's message at ``at`` replaced by another (a chat's "edit");
- ``restarted``: another message the model did not write at ``at`` (a tool run again by an
  agent framework), or a history cut before a message of the customer or a tool's.

A branch is not a rewrite: nothing the provider produced was changed. Every later request that
goes on from the branch continues it (and is compared with it, not with the path it left).

The **latest path** is the latest exchange's: what replay returns and the page shows unless
asked for another exchange's. Every path stays stored (the messages are never deleted by a
branch), so each can be replayed and shown, and erasure, exports and subject access, which read
every message of a conversation, cover every branch.

To add a kind of branch: add it to ``BRANCHES`` with its words, and decide it in
``history.exchange_plan``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

REGENERATED = "regenerated"
EDITED = "edited"
RESTARTED = "restarted"

# Each kind, and how the page says where it happened ({n}: the message's number in the path,
# counted from 1 as people count).
BRANCHES = {
    REGENERATED: "regenerated at message {n}",
    EDITED: "customer edited message {n}",
    RESTARTED: "restarted at message {n}",
}


def branch_words(kind: str, at: int | None) -> str:
    """``regenerated at message 7`` for a branch at position 6 ("" for no branch)."""
    if kind not in BRANCHES or at is None:
        return ""
    return BRANCHES[kind].format(n=at + 1)


@dataclass(frozen=True, slots=True)
class Node:
    """One exchange's path, as a step from its parent's (see the module's docstring)."""

    ordinal: int
    parent: int | None
    kept: int
    added: tuple[int, ...]
    branch: str = ""  # a kind of ``BRANCHES`` when the exchange started a branch
    at: int | None = None  # where it left its parent's path


@dataclass(frozen=True, slots=True)
class BranchPoint:
    """Where the path shown and another part: at message ``at`` of the path shown (from 0), by
    a branch of ``kind``. ``other`` is the ordinal of the other branch's latest exchange (the
    page links to its path); ``left``: the path shown is the branch (it left the other one
    there), else the other left it."""

    at: int
    kind: str
    other: int
    left: bool

    @property
    def words(self) -> str:
        return branch_words(self.kind, self.at)


class Tree:
    """The paths of a conversation's exchanges, from their ``Node`` rows (any order)."""

    def __init__(self, nodes: Iterable[Node] = ()) -> None:
        self.nodes: dict[int, Node] = {}
        self._paths: dict[int, tuple[int, ...]] = {}
        for node in sorted(nodes, key=lambda n: n.ordinal):
            self.add(node)

    def add(self, node: Node) -> None:
        """A new exchange's node (ordinals grow). Its path is worked out now when its parent's
        is at hand; a parent it continues is then forgotten (ingest asks for tips' paths only,
        so a long conversation keeps one path per branch in memory, not one per exchange)."""
        self.nodes[node.ordinal] = node
        if node.parent is None:
            self._paths[node.ordinal] = node.added
        elif node.parent in self._paths:
            parent = self._paths[node.parent]
            self._paths[node.ordinal] = (*parent[: node.kept], *node.added)
            if not node.branch:
                del self._paths[node.parent]

    @property
    def latest(self) -> int | None:
        """The latest exchange's ordinal (None for a conversation with none)."""
        return max(self.nodes, default=None)

    def chain(self, ordinal: int) -> list[int]:
        """The ordinals from the first exchange to ``ordinal``, following parents. A parent
        missing (a row changed by hand) ends the chain there; a loop cannot occur (a parent is
        always an earlier exchange), and is cut if a stored row says otherwise."""
        out: list[int] = []
        current: int | None = ordinal
        while current is not None and current in self.nodes:
            out.append(current)
            parent = self.nodes[current].parent
            current = parent if parent is not None and parent < current else None
        out.reverse()
        return out

    def path(self, ordinal: int) -> tuple[int, ...]:
        """The sequence numbers of exchange ``ordinal``'s path: its history, then its answer."""
        found = self._paths.get(ordinal)
        if found is not None:
            return found
        path: list[int] = []
        for o in self.chain(ordinal):
            cached = self._paths.get(o)
            if cached is not None:
                path = list(cached)
                continue
            node = self.nodes[o]
            del path[node.kept :]
            path.extend(node.added)
        result = tuple(path)
        self._paths[ordinal] = result
        return result

    def tips(self) -> list[int]:
        """The exchanges no later one continues, latest first: one per branch (and, after a
        regenerate, the abandoned answer's). A request is matched against these."""
        continued = {n.parent for n in self.nodes.values() if not n.branch}
        return sorted((o for o in self.nodes if o not in continued), reverse=True)

    def parting(self, shown: int, other: int) -> tuple[str, int | None]:
        """How the path of ``other`` parts from that of ``shown``: the kind and position of the
        branch between them (the one the path shown took, else the one the other took), or ""
        where neither recorded one (a path continued from an earlier response)."""
        mine, theirs = self.chain(shown), set(self.chain(other))
        for o in mine:
            node = self.nodes[o]
            if node.branch and node.parent in theirs and o not in theirs:
                return node.branch, node.at
        off = next((o for o in self.chain(other) if o not in set(mine)), None)
        if off is not None and self.nodes[off].branch:
            return self.nodes[off].branch, self.nodes[off].at
        return "", None

    def branch_points(self, shown: int) -> list[BranchPoint]:
        """Where the path of exchange ``shown`` and the other branches part, in path order: the
        branches it took (with the latest exchange of the branch it left) and the branches that
        leave it (with their latest exchange)."""
        chain = self.chain(shown)
        on_chain = set(chain)
        tips = self.tips()
        chains = {t: self.chain(t) for t in tips if t != shown}
        points: dict[tuple[int, bool], BranchPoint] = {}
        for o in chain:
            node = self.nodes[o]
            if not node.branch or node.parent is None or node.at is None:
                continue
            other = next((t for t, c in chains.items() if node.parent in c and o not in c), None)
            if other is not None:
                points.setdefault((o, True), BranchPoint(node.at, node.branch, other, left=True))
        for t, c in chains.items():  # latest tip first: the first seen per branch is its latest
            off = next((o for o in c if o not in on_chain), None)
            if off is None:
                continue
            node = self.nodes[off]
            if node.parent in on_chain and node.branch and node.at is not None:
                points.setdefault((off, False), BranchPoint(node.at, node.branch, t, left=False))
        return sorted(points.values(), key=lambda p: (p.at, not p.left, -p.other))


def common_prefix(a: Iterable[int], b: Iterable[int]) -> int:
    """How many leading elements two paths share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
