"""A dotted-module target with a server and a factory."""

from jsonrpc_mcp import Server

server = Server("dotted")


@server.tool()
def where() -> str:
    return "pkg_target.app"


def build() -> Server:
    made = Server("dotted-factory")
    made.add_tool("where", lambda: "factory")
    return made
