"""Where a notification may go: webhook addresses and e-mail recipients, checked when a rule is
saved and again when each notification is delivered.

A webhook's URL is ``http`` or ``https``, names a host and no userinfo. Its host is resolved and
refused when any address it resolves to is loopback, private, link-local, multicast, reserved,
unspecified or otherwise not global (IPv4 and IPv6, IPv4-mapped IPv6 included), and when it is a
name that only exists inside a cloud or a host (``metadata.google.internal``, ``localhost``,
``*.internal``...), unless ``NOTIFY_ALLOWED_HOSTS`` names the host or the address (an internal
receiver the operator chose). Delivery connects to the address that was checked (``Target``),
so a name whose DNS answer changes between the check and the connection cannot be turned
against an internal service; redirects are never followed.

E-mail: a rule's name becomes a subject and its recipients become headers, so neither may carry
a line break, and each recipient must be one valid address.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import validate_email

# Names that resolve to something inside a cloud or a host; refused by name, whatever DNS says.
_INTERNAL_NAMES = ("localhost", "metadata", "metadata.google.internal", "instance-data")
_INTERNAL_SUFFIXES = (".localhost", ".internal", ".local", ".localdomain", ".home.arpa")

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class Refused(ValueError):
    """A destination a notification may not go to; the message says why."""


def _allowed() -> set[str]:
    return {h.strip().lower().strip("[]") for h in settings.NOTIFY_ALLOWED_HOSTS if h.strip()}


def _internal(ip: Address) -> str:
    """Why an address is not a public destination ("" if it is one)."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return _internal(ip.ipv4_mapped)
    for kind in ("unspecified", "loopback", "link_local", "multicast", "private", "reserved"):
        if getattr(ip, f"is_{kind}"):
            return kind.replace("_", "-")
    if not ip.is_global:
        return "not global"
    return ""


@dataclass(frozen=True)
class Target:
    """A checked webhook: the URL as the rule names it, and the address delivery connects to."""

    url: str
    host: str
    address: str

    def pinned_url(self) -> str:
        """The URL with its host replaced by the checked address (the ``Host`` header and the
        TLS server name still carry ``host``)."""
        parts = urlsplit(self.url)
        ip = ipaddress.ip_address(self.address)
        shown = f"[{ip}]" if ip.version == 6 else str(ip)
        netloc = f"{shown}:{parts.port}" if parts.port else shown
        return urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))

    def host_header(self) -> str:
        parts = urlsplit(self.url)
        name = f"[{self.host}]" if ":" in self.host else self.host
        return f"{name}:{parts.port}" if parts.port else name


def _parts(url: str) -> tuple[str, str, int]:
    """The scheme, host and port of a webhook URL, or ``Refused``."""
    if any(c in url for c in "\r\n\t\x00") or url != url.strip():
        raise Refused("a webhook URL may not contain whitespace or control characters")
    if "://" not in url:
        raise Refused("a webhook URL must start with http:// or https://")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise Refused(f"a webhook URL must be http or https, not {parts.scheme!r}")
    if "@" in parts.netloc:
        raise Refused("a webhook URL may not carry a user name or password")
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        raise Refused("a webhook URL must name a host")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise Refused(f"a webhook URL's port is not valid: {exc}") from None
    return parts.scheme, host, port


def _literal(host: str) -> Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def webhook_target(url: str, *, resolve: bool = True) -> Target:
    """Check a webhook URL and pick the address to connect to (``Refused`` says why not).

    With ``resolve=False`` (a rule being saved), a name that does not resolve is accepted: it is
    resolved, and refused if need be, at each delivery."""
    _scheme, host, port = _parts(url)
    allowed = _allowed()
    literal = _literal(host)
    named_internal = host in _INTERNAL_NAMES or host.endswith(_INTERNAL_SUFFIXES)
    if literal is None and named_internal and host not in allowed:
        raise Refused(f"{host} is an internal name (NOTIFY_ALLOWED_HOSTS does not name it)")
    if literal is not None:
        addresses: list[Address] = [literal]
    else:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            if not resolve:
                return Target(url=url, host=host, address="")
            raise Refused(f"{host} does not resolve ({exc})") from None
        addresses = list(dict.fromkeys(ipaddress.ip_address(i[4][0]) for i in infos))
    if host not in allowed:
        for ip in addresses:
            why = _internal(ip)
            if why and str(ip) not in allowed:
                raise Refused(
                    f"{host} resolves to {ip}, a {why} address "
                    "(NOTIFY_ALLOWED_HOSTS does not name it)"
                )
    return Target(url=url, host=host, address=str(addresses[0]))


def validate_webhook_url(url: str) -> None:
    """The model's validator (admin form, ``rule_save``, any API): refused with the reason."""
    if not url:
        return
    try:
        webhook_target(url, resolve=False)
    except Refused as exc:
        raise ValidationError(str(exc), code="webhook_refused") from None


def validate_no_line_break(value: str) -> None:
    if any(c in value for c in "\r\n\x00") or any(ord(c) < 32 and c != "\t" for c in value):
        raise ValidationError(
            "may not contain line breaks or control characters", code="control_characters"
        )


def recipients(value: str) -> list[str]:
    """The addresses of a comma-separated list, stripped (empty items dropped)."""
    return [a.strip() for a in value.split(",") if a.strip()]


def validate_recipients(value: str) -> None:
    """Each comma-separated recipient is one valid address, with no line break anywhere."""
    validate_no_line_break(value)
    bad = []
    for address in recipients(value):
        try:
            validate_email(address)
        except ValidationError:
            bad.append(address)
    if bad:
        raise ValidationError(
            "not a valid e-mail address: %(bad)s",
            code="invalid_recipient",
            params={"bad": ", ".join(repr(b) for b in bad)},
        )
