"""A real MCP Apps host for the browser test: a web page built on ext-apps' ``AppBridge`` (npm), its
backend (the project's :class:`Client` talking to the MCP server), and headless Chromium driven over
the DevTools protocol.

* :func:`install`: ``npm ci`` of ``host/package.json`` and its lock file (``@modelcontextprotocol/ext-apps``
  and the Node.js it comes with) into ``.cache/apps-host`` (``$APPS_HOST_CACHE`` moves it), as the
  project installs every Node package; ``.ci/run`` runs it ahead of the tests.
* :class:`HostBackend`: an HTTP server on 127.0.0.1 (port 0) serving ``host/host.html``, the npm
  modules it imports (an import map names them), and three POST routes the page calls, each served
  by the MCP client: ``/host/view`` (a tool's view, read and checked by ``Client.read_app``),
  ``/host/run`` (the model's call of a tool: refused unless its visibility has "model") and
  ``/host/call`` (the view's call, through the bridge: refused unless its visibility has "app", as
  the spec requires of hosts). Where web hosts talk to MCP servers from their backend, so does this
  one: the page never reaches the MCP server itself.
* :class:`Chromium`: the browser headless, its DevTools protocol on a pipe (``--remote-debugging-pipe``,
  fds 3 and 4), every read bounded by a timeout.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import mimetypes
import os
import select
import subprocess
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import IO, Any

from jsonrpc_mcp import Client, JsonRpcError
from jsonrpc_mcp.apps import AppError
from jsonrpc_mcp_conformance import npm

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "host"
REPO = HERE.parents[1]
CACHE_ENV = "APPS_HOST_CACHE"
BRIDGE = Path("node_modules/@modelcontextprotocol/ext-apps/dist/src/app-bridge.js")
STEP_TIMEOUT = 20.0


class Unavailable(Exception):
    """The host's npm packages cannot be installed here (no npm): the reason, for a skip."""


def prefix() -> Path:
    return Path(os.environ.get(CACHE_ENV, REPO / ".cache" / "apps-host")) / "npm"


def install() -> Path:
    """The folder holding ``node_modules`` with the bridge (``npm ci`` unless already done for this
    lock file). Raises :class:`Unavailable` without npm; an install that fails otherwise raises."""
    where = prefix()
    try:
        npm.ensure_installed(SOURCE, where, [where / BRIDGE], log=False)
    except npm.NpmInstallError as exc:
        if "npm is needed" in str(exc):
            raise Unavailable(str(exc)) from exc
        raise
    return where


# -- the host's backend ------------------------------------------------------------------------------
Call = Callable[..., Any]  # portal.call: run a coroutine function on the test's event loop


class HostBackend:
    """The host page and its backend on ``http://127.0.0.1:<port>/`` (see the module docs).

    ``call(fn, *args)`` runs ``fn`` (an async function) on the event loop the ``client`` lives on
    (an anyio blocking portal's ``call``). ``calls`` records every tool call the view made.
    """

    def __init__(self, client: Client, call: Call, modules: Path) -> None:
        self.client = client
        self.call = call
        self.modules = modules.resolve()
        self.calls: list[dict[str, Any]] = []
        backend = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                backend.get(self)

            def do_POST(self) -> None:
                backend.post(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> HostBackend:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(STEP_TIMEOUT)

    def get(self, request: BaseHTTPRequestHandler) -> None:
        path = request.path.split("?", 1)[0]
        if path in ("/", "/host.html"):
            file = SOURCE / "host.html"
        elif path.startswith("/node_modules/"):
            file = (self.modules / path.lstrip("/")).resolve()
            if not file.is_relative_to(self.modules / "node_modules"):
                file = SOURCE / "missing"
        else:
            file = SOURCE / "missing"
        if not file.is_file():
            _send(request, 404, b"not found", "text/plain")
            return
        kind = "text/javascript" if file.suffix in (".js", ".mjs") else mimetypes.guess_type(file.name)[0]
        _send(request, 200, file.read_bytes(), kind or "application/octet-stream")

    def post(self, request: BaseHTTPRequestHandler) -> None:
        length = int(request.headers.get("Content-Length") or 0)
        try:
            body = json.loads(request.rfile.read(length) or b"{}")
            routes = {"/host/view": self.view, "/host/run": self.run, "/host/call": self.app_call}
            route = routes.get(request.path)
            if route is None:
                _send(request, 404, b"not found", "text/plain")
                return
            answer: dict[str, Any] = {"result": route(body)}
        except JsonRpcError as exc:
            answer = {"error": {"code": exc.code, "message": exc.message}}
        except (AppError, ValueError, KeyError) as exc:
            answer = {"error": {"code": -32000, "message": str(exc)}}
        _send(request, 200, json.dumps(answer).encode(), "application/json")

    def _tool(self, name: str) -> dict[str, Any]:
        for tool in self.call(self.client.list_tools):
            if tool.get("name") == name:
                return dict(tool)
        raise AppError(f"the server lists no tool {name!r}")

    def view(self, body: dict[str, Any]) -> dict[str, Any]:
        tool = self._tool(body["tool"])
        view = self.call(self.client.read_app, tool)
        return {
            "tool": tool,
            "uri": view.uri,
            "html": view.html,
            "ui": view.ui,
            "csp": view.content_security_policy,
        }

    def run(self, body: dict[str, Any]) -> dict[str, Any]:
        link = self.call(self.client.app_link, body["name"])
        if link is not None and not link.model_visible:
            raise AppError(f"tool {body['name']!r} is not visible to the model")
        result: dict[str, Any] = self.call(self.client.call_tool, body["name"], body.get("arguments") or {})
        return result

    def app_call(self, body: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(body)
        link = self.call(self.client.app_link, body["name"])
        if link is not None and not link.app_callable:
            raise AppError(f"tool {body['name']!r} is not callable by apps")
        result: dict[str, Any] = self.call(self.client.call_tool, body["name"], body.get("arguments") or {})
        return result


def _send(request: BaseHTTPRequestHandler, status: int, body: bytes, kind: str) -> None:
    request.send_response(status)
    request.send_header("Content-Type", kind)
    request.send_header("Content-Length", str(len(body)))
    request.send_header("Cache-Control", "no-store")
    request.end_headers()
    request.wfile.write(body)


# -- the browser ---------------------------------------------------------------------------------------
class CdpError(Exception):
    """The DevTools protocol answered an error, or the browser stopped answering."""


class Chromium:
    """Headless Chromium with its DevTools protocol on a pipe; :meth:`call` sends a command and
    waits (bounded) for its answer, events are kept in :attr:`events`."""

    def __init__(self, binary: str, profile: Path, log: IO[bytes]) -> None:
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # out of the way of 3 and 4, where the child needs them
        high_r = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
        high_w = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
        os.close(to_child_r)
        os.close(from_child_w)

        def in_child() -> None:
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)

        command = [
            binary,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--remote-debugging-pipe",
            # sandboxed iframes in the page's process, where an isolated world can reach their DOM
            "--disable-site-isolation-trials",
            "--disable-features=IsolateSandboxedIframes,site-per-process",
            f"--user-data-dir={profile}",
            "--window-size=900,700",
            "about:blank",
        ]
        self.process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, pass_fds=(3, 4), preexec_fn=in_child
        )
        os.close(high_r)
        os.close(high_w)
        self._next = 0
        self._buffer = b""
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._to_child)
        with contextlib.suppress(OSError):
            os.close(self._from_child)
        self.process.terminate()
        try:
            self.process.wait(STEP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(STEP_TIMEOUT)

    def call(
        self, method: str, params: dict[str, Any] | None = None, *, session: bool = True
    ) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session and self.session is not None:
            message["sessionId"] = self.session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._read()
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise CdpError(f"{method}: {answer['error']}")
                result: dict[str, Any] = answer.get("result", {})
                return result
            self.events.append(answer)

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._from_child], [], [], STEP_TIMEOUT)
            if not ready:
                raise CdpError(f"the browser did not answer within {STEP_TIMEOUT} s")
            chunk = os.read(self._from_child, 1 << 16)
            if not chunk:
                raise CdpError("the browser closed its DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        parsed: dict[str, Any] = json.loads(message)
        return parsed

    def open(self, url: str) -> None:
        """Attach to the first page and load ``url``."""
        pages = [
            t for t in self.call("Target.getTargets", session=False)["targetInfos"] if t["type"] == "page"
        ]
        attached = self.call("Target.attachToTarget", {"targetId": pages[0]["targetId"], "flatten": True})
        self.session = attached["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Page.navigate", {"url": url})

    def evaluate(self, expression: str, context: int | None = None) -> Any:
        """The value of ``expression`` (awaited if a promise) in the page, or in ``context``."""
        params: dict[str, Any] = {"expression": expression, "returnByValue": True, "awaitPromise": True}
        if context is not None:
            params["contextId"] = context
        answer = self.call("Runtime.evaluate", params)
        if "exceptionDetails" in answer:
            raise CdpError(f"{expression[:80]!r} threw: {answer['exceptionDetails']}")
        return answer["result"].get("value")

    def frame_context(self, url_prefix: str = "about:srcdoc") -> int:
        """An isolated world in the child frame whose URL starts with ``url_prefix``: its DOM (the
        view's), reachable even though the frame's origin is opaque to the host page."""
        tree = self.call("Page.getFrameTree")["frameTree"]
        frames = [child["frame"] for child in tree.get("childFrames", [])]
        found = [f for f in frames if f.get("url", "").startswith(url_prefix)]
        if not found:
            raise CdpError(f"no child frame at {url_prefix!r}: {[f.get('url') for f in frames]}")
        world = self.call("Page.createIsolatedWorld", {"frameId": found[0]["id"], "worldName": "test"})
        context: int = world["executionContextId"]
        return context

    def screenshot(self, path: Path) -> None:
        data = self.call("Page.captureScreenshot", {"format": "png"})["data"]
        path.write_bytes(base64.b64decode(data))


@contextlib.contextmanager
def chromium(binary: str, profile: Path, log: IO[bytes]) -> Iterator[Chromium]:
    browser = Chromium(binary, profile, log)
    try:
        yield browser
    finally:
        browser.close()


if __name__ == "__main__":  # .ci/run: install ahead of the tests (python -m tests.apps.host)
    print(f"MCP Apps host packages: {install()}")
