"""A SCIM resource's attributes, checked against what the console keeps (``Shape``); PATCH
operations applied to a representation (RFC 7644 section 3.5.2); ``attributes`` and
``excludedAttributes`` projections (section 3.9)."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from django_scim import constants
from django_scim import exceptions as scim_errors

from conversations import bounds

from ..services import PeopleError

_URN_PREFIX = re.compile(r"^urn:ietf:params:scim:schemas:core:2\.0:(user|group):", re.IGNORECASE)
_PATH = re.compile(r"^(?P<attr>[A-Za-z$][\w$]*)(?:\[(?P<filter>[^\]]*)\])?(?:\.(?P<sub>[\w$]+))?$")
_FILTER = re.compile(
    r'^\s*(?P<attr>[\w$]+)\s+eq\s+(?:"(?P<text>(?:[^"\\]|\\.)*)"|(?P<bare>true|false|null))\s*$',
    re.IGNORECASE,
)


def bad(detail: str, scim_type: str = "invalidValue") -> scim_errors.BadRequestError:
    return scim_errors.BadRequestError(detail, scim_type=scim_type)


def from_people_error(exc: PeopleError) -> scim_errors.SCIMException:
    if exc.conflict:
        return scim_errors.IntegrityError(exc.detail, scim_type="uniqueness")
    return bad(exc.detail)


class Shape:
    """What a resource type keeps: its attributes (canonical spelling), which are complex
    (with their sub-attributes), multi-valued (and how many values each may hold), required,
    read-only."""

    def __init__(
        self,
        *,
        simple: dict[str, type],
        complex_: dict[str, dict[str, type]],
        multi: frozenset[str],
        required: frozenset[str],
        read_only: frozenset[str],
        most: dict[str, int] | None = None,
    ) -> None:
        self.simple = simple
        self.complex = complex_
        self.multi = multi
        self.most = most or {}
        self.required = required
        self.read_only = read_only
        names = [*simple, *complex_, *read_only]
        self.canonical = {name.lower(): name for name in names}

    def bounded(self, attr: str, items: list[Any], at: str) -> list[Any]:
        """``items``, refused when ``attr`` may hold fewer values."""
        most = self.most.get(attr)
        if most is not None and len(items) > most:
            raise bad(f"{at} holds {len(items)} values; at most {most}")
        return items

    def name(self, raw: str) -> str | None:
        return self.canonical.get(_URN_PREFIX.sub("", raw).lower())

    def sub(self, attr: str, raw: str) -> str | None:
        subs = self.complex.get(attr, {})
        return next((s for s in subs if s.lower() == raw.lower()), None)

    def clean_value(self, attr: str, value: Any, at: str) -> Any:
        """A value for ``attr`` checked against its type; None stays None (unassigned)."""
        if value is None:
            return None
        if attr in self.simple:
            kind = self.simple[attr]
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                raise bad(f"{at} must be a {kind.__name__}")
            return _text(value, at) if isinstance(value, str) else value
        subs = self.complex[attr]
        if attr in self.multi:
            items = self.bounded(attr, value if isinstance(value, list) else [value], at)
            cleaned = [
                self._clean_item(attr, subs, item, f"{at}[{i}]") for i, item in enumerate(items)
            ]
            cleaned = [item for item in cleaned if item]
            if sum(1 for item in cleaned if item.get("primary") is True) > 1:
                raise bad(f"{at}: at most one value may be primary")
            return cleaned or None
        item = self._clean_item(attr, subs, value, at)
        return item or None

    def _clean_item(self, attr: str, subs: dict[str, type], item: Any, at: str) -> dict[str, Any]:
        if not isinstance(item, dict):
            raise bad(f"{at} must be an object")
        cleaned: dict[str, Any] = {}
        for raw, value in item.items():
            sub = next((s for s in subs if s.lower() == str(raw).lower()), None)
            if sub is None or value is None:
                continue  # a sub-attribute the console does not keep
            kind = subs[sub]
            if not isinstance(value, kind):
                raise bad(f"{at}.{sub} must be a {kind.__name__}")
            cleaned[sub] = _text(value, f"{at}.{sub}") if isinstance(value, str) else value
        return cleaned


def _text(value: str, at: str) -> str:
    """A string PostgreSQL can keep (no NUL, no lone surrogate), at most 10,000 characters."""
    try:
        bounds.check_text(value)
        value.encode("utf-8")
    except (bounds.OutOfBounds, UnicodeEncodeError):
        raise bad(
            f"{at} holds a character that cannot be stored (NUL or a lone surrogate)"
        ) from None
    if len(value) > 10_000:
        raise bad(f"{at} is longer than 10000 characters")
    return value


def _parse_filter(text: str) -> tuple[str, Any]:
    match = _FILTER.match(text)
    if match is None:
        raise bad(f"unsupported filter {text!r}: only 'sub eq \"value\"'", "invalidFilter")
    if match.group("bare") is not None:
        bare = match.group("bare").lower()
        return match.group("attr"), {"true": True, "false": False, "null": None}[bare]
    return match.group("attr"), json.loads(f'"{match.group("text")}"')


def apply_patch(shape: Shape, state: dict[str, Any], operations: Any) -> dict[str, Any]:
    """The representation after the operations (RFC 7644 section 3.5.2), on a copy."""
    if not isinstance(operations, list) or not operations:
        raise bad("a PATCH needs a non-empty Operations list")
    state = copy.deepcopy(state)
    for index, operation in enumerate(operations):
        if not isinstance(operation, dict):
            raise bad(f"Operations[{index}] must be an object")
        op = str(operation.get("op", "")).lower()
        if op not in constants.VALID_PATCH_OPS:
            raise bad(f"Operations[{index}].op must be add, remove or replace")
        path = operation.get("path")
        value = operation.get("value")
        if path is None or path == "":
            if op == "remove":
                raise bad(f"Operations[{index}]: remove needs a path", "noTarget")
            if not isinstance(value, dict):
                raise bad(f"Operations[{index}]: without a path, value must be an object")
            for key, item in value.items():
                _apply(shape, state, op, str(key), item)
        elif isinstance(path, str):
            _apply(shape, state, op, path, value)
        else:
            raise bad(f"Operations[{index}].path must be a string", "invalidPath")
    return state


def _apply(shape: Shape, state: dict[str, Any], op: str, path: str, value: Any) -> None:
    match = _PATH.match(_URN_PREFIX.sub("", path.strip()))
    if match is None:
        raise bad(f"unsupported path {path!r}", "invalidPath")
    attr = shape.name(match.group("attr"))
    if attr is None:
        return  # an attribute the console does not keep: ignored
    if attr in shape.read_only:
        raise bad(f"{attr} is read-only", "mutability")
    flt, raw_sub = match.group("filter"), match.group("sub")
    sub = None
    if raw_sub is not None:
        sub = shape.sub(attr, raw_sub)
        if sub is None:
            return  # a sub-attribute the console does not keep
    if attr in shape.simple:
        if flt is not None or sub is not None:
            raise bad(f"{path!r}: {attr} has no sub-attributes", "invalidPath")
        if op == "remove":
            if attr in shape.required:
                raise bad(f"{attr} is required and cannot be removed", "mutability")
            state[attr] = None
        else:
            state[attr] = shape.clean_value(attr, value, attr)
        return
    if attr not in shape.multi:
        current = dict(state.get(attr) or {})
        if flt is not None:
            raise bad(f"{path!r}: {attr} is not multi-valued", "invalidPath")
        if sub is not None:
            if op == "remove":
                current.pop(sub, None)
            else:
                current.update(shape.clean_value(attr, {sub: value}, path) or {})
        elif op == "remove":
            current = {}
        else:
            if not isinstance(value, dict):
                raise bad(f"{attr} must be an object")
            current.update(shape.clean_value(attr, value, attr) or {})
        state[attr] = current or None
        return
    items: list[dict[str, Any]] = list(state.get(attr) or [])
    if flt is None:
        if sub is not None:
            raise bad(f"{path!r}: name which {attr} value with a filter", "invalidPath")
        if op == "remove":
            if value is None:
                state[attr] = None
                return
            gone = shape.clean_value(attr, value, attr) or []
            gone_values = {item.get("value") for item in gone}
            kept = [item for item in items if item.get("value") not in gone_values]
            state[attr] = kept or None
            return
        new = shape.clean_value(attr, value, attr) or []
        if op == "replace":
            items = new
        else:
            if any(item.get("primary") is True for item in new):
                items = [
                    {**item, "primary": False} if "primary" in item else item for item in items
                ]
            items += [item for item in new if item not in items]
        shape.bounded(attr, items, attr)
        if sum(1 for item in items if item.get("primary") is True) > 1:
            raise bad(f"{attr}: at most one value may be primary")
        state[attr] = items or None
        return
    key, wanted = _parse_filter(flt)
    key_sub = shape.sub(attr, key)
    matched = [i for i, item in enumerate(items) if key_sub and item.get(key_sub) == wanted]
    if op == "remove":
        if sub is None:
            items = [item for i, item in enumerate(items) if i not in matched]
        else:
            for i in matched:
                items[i] = {k: v for k, v in items[i].items() if k != sub}
        state[attr] = [item for item in items if item] or None
        return
    if not matched:
        raise bad(f"no {attr} value matches {flt!r}", "noTarget")
    for i in matched:
        update = {sub: value} if sub is not None else value
        if not isinstance(update, dict):
            raise bad(f"{path!r}: value must be an object")
        items[i] = {**items[i], **(shape.clean_value(attr, update, path) or [{}])[0]}
    state[attr] = items


def representation_body(shape: Shape, body: Any) -> dict[str, Any]:
    """The state a POST or PUT body describes (attributes the console does not keep dropped)."""
    if not isinstance(body, dict):
        raise bad("the body must be a JSON object")
    state: dict[str, Any] = {}
    for raw, value in body.items():
        attr = shape.name(str(raw))
        if attr is None or attr in shape.read_only:
            continue  # id, meta, groups, schemas, attributes the console does not keep
        state[attr] = shape.clean_value(attr, value, attr)
    for attr in shape.required:
        if state.get(attr) is None:
            raise bad(f"{attr} is required")
    return state


def project(doc: dict[str, Any], request: Any) -> dict[str, Any]:
    """``attributes`` / ``excludedAttributes`` (RFC 7644 section 3.9): id and schemas always."""
    params = _projection_params(request)
    if params is None:
        return doc
    attributes, excluded = params
    always = {"id", "schemas"}
    if attributes:
        out: dict[str, Any] = {}
        for key, value in doc.items():
            wanted = [a for a in attributes if a.split(".")[0].lower() == key.lower()]
            if key in always or any("." not in a for a in wanted):
                out[key] = value
            elif wanted and isinstance(value, dict):
                subs = {a.split(".", 1)[1].lower() for a in wanted}
                kept = {k: v for k, v in value.items() if k.lower() in subs}
                if kept:
                    out[key] = kept
        return out
    if excluded:
        gone = {a.lower() for a in excluded if "." not in a}
        return {k: v for k, v in doc.items() if k in always or k.lower() not in gone}
    return doc


def _projection_params(request: Any) -> tuple[list[str], list[str]] | None:
    if request is None:
        return None
    attributes = request.GET.get("attributes", "")
    excluded = request.GET.get("excludedAttributes", "")
    if request.method == "POST" and request.path.endswith("/.search"):
        try:
            body = json.loads(request.body or b"{}")
        except ValueError:
            body = {}
        if isinstance(body, dict):
            attributes = ",".join(body.get("attributes") or []) or attributes
            excluded = ",".join(body.get("excludedAttributes") or []) or excluded

    def split(text: str) -> list[str]:
        return [_URN_PREFIX.sub("", a.strip()) for a in text.split(",") if a.strip()]

    a, e = split(attributes), split(excluded)
    return (a, e) if a or e else None


USER_SHAPE = Shape(
    simple={"userName": str, "displayName": str, "externalId": str, "active": bool},
    complex_={
        "name": {"formatted": str, "familyName": str, "givenName": str},
        "emails": {"value": str, "type": str, "primary": bool},
    },
    multi=frozenset({"emails"}),
    required=frozenset({"userName", "active"}),
    read_only=frozenset({"id", "meta", "groups", "schemas"}),
    # A person's addresses: identity providers send one to three; 50,000 were once kept.
    most={"emails": 20},
)

GROUP_SHAPE = Shape(
    simple={"displayName": str, "externalId": str},
    complex_={"members": {"value": str, "$ref": str, "type": str}},
    multi=frozenset({"members"}),
    required=frozenset({"displayName"}),
    read_only=frozenset({"id", "meta", "schemas"}),
)
