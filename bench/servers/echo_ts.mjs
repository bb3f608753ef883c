// The echo benchmark server written with the official MCP TypeScript SDK (McpServer), over stdio
// or, with --http PORT, Streamable HTTP on node:http (stateful, JSON responses).
//
// Usage: node bench/servers/echo_ts.mjs [--http PORT]
// MCPBENCH_NODE_MODULES: the node_modules folder holding @modelcontextprotocol/sdk and zod (bench/ts,
// installed by bench/peers.py into .cache/bench-ts/npm). MCPBENCH_TOOLS (default 0) registers that
// many extra dummy tools tool_0001 ... taking {x: integer}.
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const modules = process.env.MCPBENCH_NODE_MODULES;
if (!modules) {
  process.stderr.write("echo_ts.mjs: MCPBENCH_NODE_MODULES is not set\n");
  process.exit(2);
}
const load = (relative) => import(pathToFileURL(join(modules, relative)).href);
const sdk = join("@modelcontextprotocol", "sdk", "dist", "esm", "server");
const { McpServer } = await load(join(sdk, "mcp.js"));
const { z } = await load(join("zod", "index.js"));
const extraTools = Number.parseInt(process.env.MCPBENCH_TOOLS || "0", 10) || 0;

function makeServer() {
  const server = new McpServer({ name: "bench-echo-ts", version: "0.1.0" });
  server.registerTool(
    "echo",
    { description: "Echo the message back.", inputSchema: { message: z.string() } },
    async ({ message }) => ({ content: [{ type: "text", text: message }] }),
  );
  for (let i = 1; i <= extraTools; i++) {
    server.registerTool(
      `tool_${String(i).padStart(4, "0")}`,
      { description: `Dummy tool number ${i}.`, inputSchema: { x: z.number().int().optional() } },
      async ({ x }) => ({ content: [{ type: "text", text: String(x ?? 0) }] }),
    );
  }
  if (process.env.MCPBENCH_COMPLEX === "1") {
    // the schema of complex_schema.json, validated by zod on every call
    const item = z.object({ id: z.number().int(), label: z.string(), weight: z.number().optional() });
    const options = z.object({ dry_run: z.boolean().optional(), depth: z.number().int().min(1).optional() });
    server.registerTool(
      "complex",
      {
        description: "A tool with a complex schema.",
        inputSchema: {
          name: z.string().min(1).max(64),
          count: z.number().int().min(0).max(1000),
          mode: z.enum(["fast", "safe", "slow"]).optional(),
          tags: z.array(z.string()).max(16).optional(),
          items: z.array(item),
          options: options.optional(),
        },
      },
      async ({ name, count, items }) => ({ content: [{ type: "text", text: `${name}:${count}:${items.length}` }] }),
    );
  }
  return server;
}

async function serveStdio() {
  const { StdioServerTransport } = await load(join(sdk, "stdio.js"));
  await makeServer().connect(new StdioServerTransport());
}

async function serveHttp(port) {
  const { StreamableHTTPServerTransport } = await load(join(sdk, "streamableHttp.js"));
  const sessions = new Map();
  const httpServer = createServer(async (req, res) => {
    try {
      const sessionId = req.headers["mcp-session-id"];
      let transport = sessionId === undefined ? undefined : sessions.get(sessionId);
      if (transport === undefined) {
        if (sessionId !== undefined) {
          res.writeHead(404, { "content-type": "application/json" });
          res.end('{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}');
          return;
        }
        // A new session (the transport itself refuses anything but initialize without a session id).
        const created = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          enableJsonResponse: true,
          onsessioninitialized: (id) => sessions.set(id, created),
        });
        created.onclose = () => {
          if (created.sessionId) sessions.delete(created.sessionId);
        };
        await makeServer().connect(created);
        transport = created;
      }
      await transport.handleRequest(req, res);
    } catch (error) {
      process.stderr.write(`echo_ts.mjs: ${error?.stack ?? error}\n`);
      if (!res.headersSent) res.writeHead(500).end();
    }
  });
  httpServer.keepAliveTimeout = 60_000;
  httpServer.listen(port, "127.0.0.1");
  const stop = () => httpServer.close(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

const httpAt = process.argv.indexOf("--http");
if (httpAt >= 0) {
  await serveHttp(Number.parseInt(process.argv[httpAt + 1] ?? process.env.MCPBENCH_PORT ?? "8000", 10));
} else {
  await serveStdio();
}
