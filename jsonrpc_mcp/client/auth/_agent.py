"""The user-agent step of the authorization code flow: send the user to the authorization URL and
bring back the URL the authorization server redirected to (it carries ``code`` and ``state``).

- :class:`LoopbackBrowser` is for people (RFC 8252 §7.3): it listens on 127.0.0.1, opens the
  system browser (Python's :mod:`webbrowser`, which honours ``$BROWSER``) and takes the redirect.
  When no browser opens, its ``show`` callback gets the URL to open by hand.
- :class:`HeadlessBrowser` is for tests and the conformance suite: it fetches the authorization URL
  with plain GETs and follows redirects until one points at its redirect URI. It works with
  authorization servers that approve without a person (test servers, pre-approved clients).

Any object with ``redirect_uri`` and ``async authorize(url) -> str`` can take their place."""

from __future__ import annotations

import contextlib
import logging
import socket
import webbrowser
from collections.abc import Callable
from typing import Protocol, runtime_checkable
from urllib.parse import urljoin, urlsplit

import anyio
import h11

from ...transports.http._authz import AuthorizationError
from ._http import fetch

__all__ = ["HeadlessBrowser", "LoopbackBrowser", "UserAgent"]

logger = logging.getLogger("jsonrpc_mcp.client.auth")


@runtime_checkable
class UserAgent(Protocol):
    """Takes the user through the authorization request."""

    @property
    def redirect_uri(self) -> str:
        """Where the authorization server sends the user back (registered with the client)."""
        ...

    async def authorize(self, url: str) -> str:
        """Send the user to ``url``; return the full URL the server redirected back to."""
        ...


def _same_endpoint(url: str, redirect_uri: str) -> bool:
    a, b = urlsplit(url), urlsplit(redirect_uri)
    return (a.scheme, a.netloc, a.path or "/") == (b.scheme, b.netloc, b.path or "/")


class HeadlessBrowser:
    """Follows the authorization URL's redirects with GETs (cookies kept per host) until one reaches
    ``redirect_uri``; nothing listens there. ``max_hops`` bounds the chase."""

    def __init__(
        self,
        redirect_uri: str = "http://127.0.0.1:3000/callback",
        *,
        max_hops: int = 20,
        timeout: float = 30.0,
    ) -> None:
        self._redirect_uri = redirect_uri
        self.max_hops = max_hops
        self.timeout = timeout

    @property
    def redirect_uri(self) -> str:
        """The redirect URI given (nothing listens there)."""
        return self._redirect_uri

    async def authorize(self, url: str) -> str:
        """Follow ``url``'s redirects to the redirect URI; :class:`AuthorizationError` when a page
        wants a person, or after ``max_hops``."""
        cookies: dict[str, dict[str, str]] = {}
        for _ in range(self.max_hops):
            host = urlsplit(url).netloc
            jar = cookies.setdefault(host, {})
            headers = {"accept": "text/html,*/*"}
            if jar:
                headers["cookie"] = "; ".join(f"{k}={v}" for k, v in jar.items())
            reply = await fetch("GET", url, headers=headers, timeout=self.timeout)
            for value in reply.set_cookies:
                name, _, rest = value.partition("=")
                jar[name.strip()] = rest.split(";", 1)[0].strip()
            location = reply.headers.get("location")
            if reply.status in (301, 302, 303, 307, 308) and location:
                url = urljoin(url, location)
                if _same_endpoint(url, self._redirect_uri):
                    return url
                continue
            raise AuthorizationError(
                f"the authorization server answered HTTP {reply.status} instead of redirecting back: "
                "it wants a person (use LoopbackBrowser)"
            )
        raise AuthorizationError(
            f"the authorization request did not come back within {self.max_hops} redirects"
        )


_PAGE = b"<!doctype html><meta charset=utf-8><title>jsonrpc-mcp</title><p>%s You can close this window.</p>"


class LoopbackBrowser:
    """The authorization code flow for a person at this machine (RFC 8252 §7.3).

    ``port`` 0 picks a free port when the redirect URI is first needed; a fixed port keeps the
    redirect URI the same across runs (some servers register it exactly). ``open`` opens a URL
    (default :func:`webbrowser.open`); ``show`` is called with the URL when the browser could not
    be opened (the CLI prints it to stderr). ``timeout`` bounds the wait for the user."""

    def __init__(
        self,
        *,
        port: int = 0,
        host: str = "127.0.0.1",
        path: str = "/callback",
        open: Callable[[str], bool] | None = None,
        show: Callable[[str], None] | None = None,
        timeout: float = 300.0,
    ) -> None:
        self._host, self._port, self._path = host, port, path
        self._open = open if open is not None else webbrowser.open
        self._show = show
        self.timeout = timeout
        self._sock: socket.socket | None = None

    def _listen(self) -> socket.socket:
        if self._sock is None:
            sock = socket.socket(socket.AF_INET6 if ":" in self._host else socket.AF_INET)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self._host, self._port))
            sock.listen(8)
            sock.setblocking(False)
            self._port = sock.getsockname()[1]  # the redirect URI stays the same for later authorizations
            self._sock = sock
        return self._sock

    @property
    def redirect_uri(self) -> str:
        """``http://127.0.0.1:PORT/callback``: listening starts when it is first asked for."""
        port = self._listen().getsockname()[1]
        host = f"[{self._host}]" if ":" in self._host else self._host
        return f"http://{host}:{port}{self._path}"

    def close(self) -> None:
        """Stop listening (the next authorization listens again)."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    async def authorize(self, url: str) -> str:
        """Open ``url`` in the browser and wait (at most ``timeout``) for the redirect."""
        sock = self._listen()
        try:
            with anyio.fail_after(self.timeout):
                async with anyio.create_task_group() as tasks:
                    # the browser is started in a thread (a $BROWSER command may run until the user
                    # is done) while the listener waits for the redirect
                    tasks.start_soon(self._launch, url)
                    target = await self._wait_for_callback(sock)
                    tasks.cancel_scope.cancel()
        except TimeoutError:
            raise AuthorizationError(
                f"nobody completed the authorization in the browser within {self.timeout:g} s"
            ) from None
        finally:
            self.close()
        return target

    async def _launch(self, url: str) -> None:
        try:
            opened = await anyio.to_thread.run_sync(self._open, url, abandon_on_cancel=True)
        except Exception:  # webbrowser raises on broken $BROWSER settings
            logger.debug("the browser could not be opened", exc_info=True)
            opened = False
        if not opened and self._show is not None:
            self._show(url)

    async def _wait_for_callback(self, sock: socket.socket) -> str:
        while True:
            await anyio.wait_readable(sock)
            try:
                conn, _ = sock.accept()
            except BlockingIOError:
                continue
            with conn:
                target = await self._serve_one(conn)
            if target is not None:
                return target

    async def _serve_one(self, conn: socket.socket) -> str | None:
        """Read one request; the redirect URL when it is the callback, else None (404)."""
        conn.setblocking(False)
        machine = h11.Connection(h11.SERVER)
        with anyio.move_on_after(10):
            while True:
                event = machine.next_event()
                if event is h11.NEED_DATA:
                    await anyio.wait_readable(conn)
                    try:
                        machine.receive_data(conn.recv(65536))
                    except (BlockingIOError, h11.RemoteProtocolError):
                        continue
                    continue
                break
            if not isinstance(event, h11.Request):
                return None
            target = event.target.decode("latin-1")
            url = f"http://{urlsplit(self.redirect_uri).netloc}{target}"
            done = _same_endpoint(url, self.redirect_uri)
            text = b"Authorization received." if done else b"Not found."
            body = _PAGE % text
            status = 200 if done else 404
            headers = [
                ("content-type", "text/html; charset=utf-8"),
                ("content-length", str(len(body))),
                ("connection", "close"),  # one request per connection: the listener closes it
            ]
            out = machine.send(h11.Response(status_code=status, headers=headers))
            out = (
                (out or b"")
                + (machine.send(h11.Data(data=body)) or b"")
                + (machine.send(h11.EndOfMessage()) or b"")
            )
            conn.setblocking(True)
            conn.settimeout(5)
            with contextlib.suppress(OSError):
                conn.sendall(out)
            return url if done else None
        return None
