"""A real OpenID Provider on loopback for the sign-in tests: Node's ``oidc-provider``, installed
from the npm registry by ``npm ci`` from ``provider/package-lock.json`` on first use (once per
lockfile, under a lock: pytest-xdist workers may ask at once), like the AI SDK of the
differential test.

``OpenIdProvider.sign_in(client, ...)`` walks the authorization code flow the way a browser
would: the console's ``/oidc/authenticate/`` (Django's test client), the provider's own sign-in
and consent forms (an HTTP client following them), back to the console's callback.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

import httpx

from tests.installs import exclusive

PROVIDER_DIR = Path(__file__).resolve().parent / "provider"
CLIENT_ID = "support-console"
CLIENT_SECRET = "suite-client-secret-not-secret"
PROVIDER_NAME = "Suite IdP"
START_SECONDS = 30


def node_unavailable() -> str | None:
    if shutil.which("node") is None or shutil.which("npm") is None:
        return "the OpenID Provider of the sign-in tests needs Node.js (20 or later) and npm"
    return None


def install() -> None:
    """``npm ci`` into provider/node_modules, once per lockfile (a stamp named by its hash)."""
    lock = PROVIDER_DIR / "package-lock.json"
    digest = hashlib.sha256(lock.read_bytes()).hexdigest()[:16]
    stamp = PROVIDER_DIR / "node_modules" / f".installed-{digest}"
    if stamp.exists():
        return
    with exclusive(PROVIDER_DIR / ".install.lock"):
        if stamp.exists():
            return
        npm = shutil.which("npm")
        assert npm is not None
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--prefer-offline"],
            cwd=PROVIDER_DIR,
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
            env={**os.environ, "npm_config_update_notifier": "false"},
        )
        if done.returncode != 0:
            raise RuntimeError(f"npm ci failed in {PROVIDER_DIR}:\n{done.stdout}\n{done.stderr}")
        stamp.write_text(digest)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class OpenIdProvider:
    issuer: str
    accounts_file: Path
    process: subprocess.Popen[bytes]
    accounts: dict[str, dict[str, Any]] = field(default_factory=dict)

    def set_account(self, sub: str, **claims: Any) -> None:
        """Create or replace the account ``sub`` (read by the provider at every sign-in)."""
        self.accounts[sub] = claims
        self.accounts_file.write_text(json.dumps(self.accounts))

    def next_id_token(self, *, claims: dict[str, Any] | None = None, expired: bool = False) -> None:
        """The next ID token the provider issues carries these claims (and is expired)."""
        response = httpx.post(
            f"{self.issuer}/__test/next-id-token",
            json={"claims": claims or {}, "expired": expired},
            timeout=10,
        )
        assert response.status_code == 204, response.text

    def settings(self) -> dict[str, Any]:
        return {
            "OIDC_ISSUER": self.issuer,
            "OIDC_CLIENT_ID": CLIENT_ID,
            "OIDC_CLIENT_SECRET": CLIENT_SECRET,
            "OIDC_PROVIDER_NAME": PROVIDER_NAME,
            "OIDC_SCOPES": "openid email profile",
            "OIDC_ROLE_CLAIM": "groups",
            "OIDC_ROLE_MAP": "support=support_agent,reviewers=reviewer,console-admins=admin",
        }

    def authorize(
        self, authorize_url: str, *, login: str, callback_prefix: str = "http://testserver/"
    ) -> str:
        """Follow the provider's pages from the authorization URL to the redirect back to the
        console (returned): its sign-in form (``login``, any password) and its consent form."""
        with httpx.Client(timeout=10, follow_redirects=False) as browser:
            url = authorize_url
            for _ in range(20):
                if url.startswith(callback_prefix):
                    return url
                response = browser.get(url)
                if response.is_redirect:
                    url = urljoin(url, response.headers["location"])
                    continue
                assert response.status_code == 200, (url, response.status_code, response.text)
                form = _form(response.text)
                data = dict(form["fields"])
                if data.get("prompt") == "login":
                    data.update(login=login, password="any-password")
                posted = browser.post(urljoin(url, form["action"]), data=data)
                assert posted.is_redirect, (posted.status_code, posted.text)
                url = urljoin(url, posted.headers["location"])
            raise AssertionError(f"no redirect back to the console from {authorize_url}")

    def sign_in(
        self,
        client: Any,
        *,
        login: str,
        tamper: Callable[[str], str] | None = None,
        tamper_callback: Callable[[str], str] | None = None,
    ) -> Any:
        """The whole flow through Django's test client; returns the callback's response.
        ``tamper`` rewrites the authorization URL before the provider sees it, and
        ``tamper_callback`` the callback URL before the console sees it."""
        start = client.get("/oidc/authenticate/")
        assert start.status_code == 302, start.content
        authorize_url = start["Location"]
        assert authorize_url.startswith(self.issuer), authorize_url
        if tamper is not None:
            authorize_url = tamper(authorize_url)
        back = self.authorize(authorize_url, login=login)
        if tamper_callback is not None:
            back = tamper_callback(back)
        parts = urlsplit(back)
        return client.get(f"{parts.path}?{parts.query}")

    def stop(self) -> None:
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)


def _form(html: str) -> dict[str, Any]:
    action = re.search(r'<form[^>]*action="([^"]+)"', html)
    assert action is not None, html
    fields = re.findall(r'<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"', html)
    return {"action": unescape(action.group(1)), "fields": [(k, unescape(v)) for k, v in fields]}


def with_param(url: str, name: str, value: str) -> str:
    """``url`` with one query parameter replaced."""
    parts = urlsplit(url)
    query = [(k, value if k == name else v) for k, v in parse_qsl(parts.query)]
    return urlunsplit(parts._replace(query=urlencode(query)))


@contextmanager
def running_provider(tmp: Path, *, redirect_uris: list[str]) -> Iterator[OpenIdProvider]:
    install()
    port = free_port()
    issuer = f"http://127.0.0.1:{port}"
    accounts = tmp / "accounts.json"
    accounts.write_text("{}")
    config = tmp / "provider.json"
    config.write_text(
        json.dumps(
            {
                "port": port,
                "issuer": issuer,
                "accounts": str(accounts),
                "clients": [
                    {
                        "client_id": CLIENT_ID,
                        "client_secret": CLIENT_SECRET,
                        "redirect_uris": redirect_uris,
                    }
                ],
            }
        )
    )
    log = (tmp / "provider.log").open("wb")
    process = subprocess.Popen(
        [shutil.which("node") or "node", str(PROVIDER_DIR / "provider.mjs"), str(config)],
        cwd=PROVIDER_DIR,
        stdout=subprocess.PIPE,
        stderr=log,
    )
    op = OpenIdProvider(issuer=issuer, accounts_file=accounts, process=process)
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + START_SECONDS
        line = b""
        while time.monotonic() < deadline and not line.startswith(b"ready"):
            line = process.stdout.readline()
            if not line and process.poll() is not None:
                raise AssertionError(f"the provider exited:\n{(tmp / 'provider.log').read_text()}")
        assert line.startswith(b"ready"), "the provider did not start"
        yield op
    finally:
        op.stop()
        log.close()
