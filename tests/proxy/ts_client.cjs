// The official TypeScript SDK's client (1.x: the handshake era only) drives the stdio server whose
// command is argv[2..]: lists its tools, calls three of them (one reports progress, one asks the
// user, answered here), reads a resource, and prints what it got as one JSON line.
// Run with NODE_PATH pointing at a node_modules that holds @modelcontextprotocol/sdk.
"use strict";
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { ElicitRequestSchema } = require("@modelcontextprotocol/sdk/types.js");

async function main() {
  const [command, ...args] = process.argv.slice(2);
  const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
  const client = new Client({ name: "ts-sdk-client", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async () => ({
    action: "accept",
    content: { username: "ts", email: "ts@example.com" },
  }));
  await client.connect(transport);
  const progress = [];
  const out = {
    server: client.getServerVersion(),
    tools: (await client.listTools()).tools.map((tool) => tool.name),
    simple: await client.callTool({ name: "test_simple_text", arguments: {} }),
    withProgress: await client.callTool({ name: "test_tool_with_progress", arguments: {} }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    }),
    elicited: await client.callTool({ name: "test_elicitation", arguments: { message: "Who?" } }),
    read: await client.readResource({ uri: "test://static-text" }),
  };
  out.progress = progress;
  process.stdout.write(JSON.stringify(out) + "\n");
  await client.close();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
