"""Successive ``Content`` pieces of one model turn made one ``Content``: a stream's chunks (each
chunk's ``candidates[0].content`` holds the parts generated since the one before), and the
same pieces when a client sends them back one per chunk (``google-genai``'s ``Chat`` records a
streamed answer as one ``Content`` per chunk, and so sends it).

The rule, one for both: a ``text`` part continues the text part before it when both are of the
same kind (thought or not), hold nothing but ``text``, ``thought`` and a signature, and the one
before carries no ``thoughtSignature`` yet; a signature that comes on the continuing part (the
last piece of a run, often an empty ``"text": ""``) goes onto the part it closes, where a
non-streamed response has it. A part after a signed one starts a new part: a signed text part
followed by more text stays two parts, the signature where it was. Every other part (a
``functionCall``, code, media, a kind this code does not know) is a part of its own, as it came.
The pieces of a text are joined once, at the end (``join_pieces``: a surrogate pair split
across two chunks is one character again).
"""

from __future__ import annotations

from typing import Any

from ..base import join_pieces
from .parts import SIGNATURE, signature_of

_TEXT_KEYS = frozenset({"text", "thought", SIGNATURE, "thought_signature"})


def _plain_text(part: Any) -> bool:
    return isinstance(part, dict) and isinstance(part.get("text"), str) and set(part) <= _TEXT_KEYS


class Turn:
    """The model's turn being put together, piece by piece (``add``), then ``content()``."""

    def __init__(self) -> None:
        self.keys: list[str] = []  # the content's members, in the order they first came
        self.role: Any = None
        self.parts: list[Any] = []
        self.pieces: dict[int, list[str]] = {}
        self.others: dict[str, Any] = {}
        self.seen = False

    def add(self, content: dict[str, Any]) -> None:
        self.seen = True
        for key, value in content.items():
            if key not in self.keys:
                self.keys.append(key)
            if key == "role":
                self.role = value if self.role is None else self.role
            elif key != "parts":
                self.others[key] = value
        found = content.get("parts")
        for part in found if isinstance(found, list) else ():
            self._part(part)

    def _part(self, part: Any) -> None:
        if self.parts and _plain_text(part) and self._continues(part):
            i = len(self.parts) - 1
            last = self.parts[i]
            self.pieces.setdefault(i, [last["text"]]).append(part["text"])
            signature = signature_of(part)
            if signature is not None:
                last["thoughtSignature" if SIGNATURE in part else "thought_signature"] = signature
            return
        self.parts.append(dict(part) if isinstance(part, dict) else part)

    def _continues(self, part: dict[str, Any]) -> bool:
        last = self.parts[-1]
        return (
            _plain_text(last)
            and signature_of(last) is None
            and (last.get("thought") is True) == (part.get("thought") is True)
        )

    def content(self) -> dict[str, Any]:
        for i, pieces in self.pieces.items():
            self.parts[i]["text"] = join_pieces(pieces)
        self.pieces = {}
        out: dict[str, Any] = {}
        for key in self.keys or ["parts", "role"]:
            if key == "parts":
                out["parts"] = self.parts
            elif key == "role":
                out["role"] = self.role
            else:
                out[key] = self.others[key]
        if "parts" not in out:
            out["parts"] = self.parts
        if out.get("role") is None:
            out["role"] = "model"
        return out


def merged(contents: list[dict[str, Any]]) -> dict[str, Any]:
    """Successive contents of one turn as one (``Turn``)."""
    turn = Turn()
    for content in contents:
        turn.add(content)
    return turn.content()
