"""Walk through the memory server over a real stdio connection, printing every exchange (``make demo``).

The server runs as a subprocess (``python -m jsonrpc_mcp serve examples/memory/server.py --data-dir
TMP``) on a fresh temporary data directory, so nothing touches your real memories. Each step prints
the method, its params and the result (or error) as JSON; tool and prompt text is printed once more
as plain text, the way a model would read it. Then the same exchanges are shown as they crossed the
wire, frame by frame, annotated by ``jsonrpc-mcp trace`` (the server runs behind the tap; see
docs/trace.md): each frame's meaning, its pairing and latency, its specification page, and any rule
it breaks. Exit status: 0 if every step did what it should, 1 if anything was unexpected.
``--server PATH`` points the same script at another server file; ``--no-trace`` leaves the tap out.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

import anyio

from jsonrpc_mcp import Client, JsonRpcError

SERVER = Path(__file__).resolve().with_name("server.py")
PROTOCOL_VERSION = "2025-11-25"
DEADLINE = 60.0  # seconds for the whole demo
REQUEST_TIMEOUT = 10.0  # seconds for each response
_QUOTED = re.compile(r"^\d+\. (\{.*\})$")


class DemoFailure(Exception):
    """A step did not do what the demo expected."""


def check(condition: bool, what: str) -> None:
    if not condition:
        raise DemoFailure(what)


def dumps(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def texts(result: dict[str, Any]) -> list[str]:
    """The text blocks of a tool result."""
    return [block["text"] for block in result.get("content", []) if block.get("type") == "text"]


def quoted_memories(text: str) -> list[dict[str, Any]]:
    """The memories a recall/prompt text quotes, one JSON object per numbered line."""
    found: list[dict[str, Any]] = []
    for line in text.splitlines():
        match = _QUOTED.match(line)
        if match:
            found.append(json.loads(match.group(1)))
    return found


class Demo:
    """Numbered, printed exchanges with one connected client."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.step = 0

    def show(self, title: str, method: str, params: Any, label: str, outcome: Any) -> None:
        self.step += 1
        print(f"\n=== {self.step}. {title}")
        print(f"--> {method}")
        print(dumps(params))
        print(f"<-- {label}")
        print(dumps(outcome))
        plain: list[str] = []
        if isinstance(outcome, dict):
            plain = texts(outcome)
            plain += [m["content"]["text"] for m in outcome.get("messages", []) if "text" in m["content"]]
        for text in plain:
            if "\n" in text:
                print("    (text as the model reads it)")
                print("\n".join("    | " + line for line in text.splitlines()))

    async def request(self, title: str, method: str, params: Any) -> Any:
        result = await self.client.request(method, params)
        self.show(title, method, params, "result", result)
        return result

    async def tool(self, title: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = await self.request(
            title, "tools/call", {"name": name, "arguments": arguments}
        )
        return result


async def run_demo(data_dir: Path, server: Path = SERVER, trace: Path | None = None) -> None:
    command = [sys.executable, "-m", "jsonrpc_mcp", "serve", str(server), "--data-dir", str(data_dir)]
    started = dt.datetime.now(dt.timezone.utc).date().isoformat()
    print("Starting the memory server over stdio:")
    print("  " + " ".join(command))
    if trace is not None:  # behind the tap, which writes its annotations to the trace file
        command = [sys.executable, "-m", "jsonrpc_mcp", "trace", "--out", str(trace), "--", *command]
    async with Client.stdio(
        command, initialize=False, protocol_version=PROTOCOL_VERSION, request_timeout=REQUEST_TIMEOUT
    ) as client:
        demo = Demo(client)

        init_params = {
            "protocolVersion": client.requested_version,
            "capabilities": client.capabilities,
            "clientInfo": client.client_info,
        }
        init = await client.initialize()  # also sends notifications/initialized
        demo.show("Handshake", "initialize", init_params, "result", init)
        check(init.get("protocolVersion") == PROTOCOL_VERSION, "the server did not accept 2025-11-25")
        missing = sorted({"tools", "resources", "prompts"} - set(client.server_capabilities))
        check(not missing, f"the server lacks capabilities {missing}")

        listed = await demo.request("What the server offers", "tools/list", {})
        names = sorted(tool["name"] for tool in listed["tools"])
        check(names == ["forget", "forget_tag", "recall", "remember"], f"unexpected tools: {names}")

        notes = [
            ("Team standup moves to 9:30 on Tuesdays from next week.", ["work", "meetings"]),
            ("Alice takes her coffee with oat milk, no sugar.", ["people", "coffee"]),
            ("Book the train to Lyon for the conference before Friday.", ["work", "travel"]),
        ]
        ids: list[int] = []
        for number, (text, tags) in enumerate(notes, 1):
            title = f"Remember a note ({number}/{len(notes)})"
            result = await demo.tool(title, "remember", {"text": text, "tags": tags})
            check(not result.get("isError"), f"remember failed: {texts(result)}")
            ids.append(int(result["structuredContent"]["id"]))
        standup, coffee, train = ids

        found = await demo.tool("Recall by keyword", "recall", {"keyword": "coffee"})
        text = "\n".join(texts(found))
        check("full-text match" in text, "recall by keyword was not a full-text match")
        check([m["id"] for m in quoted_memories(text)] == [coffee], "recall by keyword found the wrong notes")

        tagged = await demo.tool("Recall by tag", "recall", {"tag": "work"})
        tagged_ids = sorted(m["id"] for m in quoted_memories("\n".join(texts(tagged))))
        check(tagged_ids == sorted([standup, train]), f"recall by tag found {tagged_ids}")

        invalid = await demo.tool("An invalid call: limit is at most 50", "recall", {"limit": 100})
        message = "\n".join(texts(invalid))
        check(invalid.get("isError") is True, "an out-of-range limit was not rejected")
        check("limit" in message and "maximum of 50" in message, f"unclear validation error: {message}")

        read = await demo.request("Read every memory", "resources/read", {"uri": "memory://all"})
        everything = json.loads(read["contents"][0]["text"])
        check([m["id"] for m in everything] == ids, "memory://all does not list the three notes")

        today = dt.datetime.now(dt.timezone.utc).date().isoformat()
        prompt = await demo.request(
            "Prompt: recap of today", "prompts/get", {"name": "daily-recap", "arguments": {"date": today}}
        )
        recap = prompt["messages"][0]["content"]["text"]
        recapped = sorted(m["id"] for m in quoted_memories(recap))
        if today == started:  # otherwise midnight (UTC) passed during the demo: today has fewer notes
            check(recapped == ids, f"the recap quotes {recapped}, not today's notes {ids}")
        check(today in recap, "the recap does not name the day")

        gone = await demo.tool("Forget the coffee note", "forget", {"id": coffee})
        check(not gone.get("isError"), f"forget failed: {texts(gone)}")

        again = await demo.tool("Recall 'coffee' again", "recall", {"keyword": "coffee"})
        text = "\n".join(texts(again))
        check("recency fallback" in text, "recall after forget was not a recency fallback")
        check(coffee not in [m["id"] for m in quoted_memories(text)], "the forgotten note is still recalled")

    if trace is not None:
        annotated = await anyio.Path(trace).read_text(encoding="utf-8")
        print("\n--- The same exchanges on the wire, frame by frame (jsonrpc-mcp trace):\n")
        print(annotated, end="")
        check(" ! " not in annotated and "\n           ! " not in annotated, "a frame broke a rule (see '!')")
    print(f"\nDone: {demo.step} exchanges, every one as expected.")


def _innermost(exc: BaseException) -> BaseException:
    """Unwrap single-exception groups so the report names the real error."""
    inner = getattr(exc, "exceptions", None)
    while isinstance(inner, tuple) and len(inner) == 1:
        exc = inner[0]
        inner = getattr(exc, "exceptions", None)
    return exc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--server", type=Path, default=SERVER, help="server file to demo (default: %(default)s)"
    )
    parser.add_argument("--no-trace", action="store_true", help="do not show the annotated frames")
    args = parser.parse_args(argv)
    server = args.server.resolve()
    with tempfile.TemporaryDirectory(prefix="jsonrpc-mcp-memory-demo-") as tmp:
        trace = None if args.no_trace else Path(tmp) / "wire.trace"

        async def bounded() -> None:
            with anyio.fail_after(DEADLINE):
                await run_demo(Path(tmp) / "data", server, trace)

        try:
            anyio.run(bounded)
        except Exception as exc:
            error = _innermost(exc)
            sys.stdout.flush()
            if isinstance(error, DemoFailure):
                print(f"\ndemo failed: {error}", file=sys.stderr)
            elif isinstance(error, JsonRpcError):
                print(f"\ndemo failed: unexpected JSON-RPC error {error.to_dict()}", file=sys.stderr)
            elif isinstance(error, TimeoutError):
                print(f"\ndemo failed: no answer in time ({error!r})", file=sys.stderr)
            else:
                traceback.print_exception(type(error), error, error.__traceback__)
                print("\ndemo failed", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
