// A driver of the official TypeScript SDK's client (@modelcontextprotocol/client, the v2 SDK) for
// `jsonrpc-mcp conformance client`: plain JavaScript (ESM), no build step.
//
//     jsonrpc-mcp conformance client --transport both -- NODE .cache/ts-sdk-client/npm/client.mjs
//
// (tests/conformance/clients/ts_client.py installs the SDK and copies this file beside its
// node_modules.) It plays the harness's scenarios with the SDK's public API only: `Client` over
// `StreamableHTTPClientTransport` (the URL is the last argument) or, when the harness gives
// MCP_CONFORMANCE_SERVER_COMMAND (the scenario server's command line as a JSON array),
// `StdioClientTransport`. MCP_CONFORMANCE_SCENARIO chooses the scenario;
// MCP_CONFORMANCE_PROTOCOL_VERSION the era: 2026-07-28 is `versionNegotiation: {mode: 'auto'}`
// (server/discover, then the per-request envelope), a handshake revision the SDK's default
// ('legacy': initialize). MCP_CONFORMANCE_CONTEXT carries a scenario's context (toolCalls).
//
// Whatever the protocol asks (handshake, _meta, headers, retries, which tools to keep, the
// defaults of an elicited form) is the SDK's doing; this file only chooses what the application
// asks and answers. Exit status 0 when the scenario's steps succeeded, 1 when one failed, 2 for a
// scenario it does not play (NOT_PLAYED says why) or a bad invocation.

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const CLIENT_INFO = { name: 'mcp-typescript-sdk-conformance-driver', version: '1.0.0' };
const STEP_TIMEOUT_MS = 20000; // the whole scenario; the harness kills the process later
const MODERN = new Set(['2026-07-28']);

export const NOT_PLAYED = {
  'auth/*':
    'the authorization scenarios need an OAuth redirect handler and token storage around the ' +
    "SDK's auth provider; this driver has none"
};

// -- what the application answers ---------------------------------------------------------------
const answerSampling = async () => ({
  role: 'assistant',
  content: { type: 'text', text: 'Paris' },
  model: 'conformance-model'
});
const oneRoot = async () => ({ roots: [{ uri: 'file:///tmp/conformance-root', name: 'conformance' }] });
// accepted with nothing filled in: the SDK fills each field's default (capability form.applyDefaults)
const acceptAsPrefilled = async () => ({ action: 'accept', content: {} });
const confirm = async () => ({ action: 'accept', content: { confirmed: true } });

// -- connecting ------------------------------------------------------------------------------------
async function connect({ capabilities = {}, handlers = {} } = {}) {
  const version = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION;
  const options = { capabilities };
  if (!version || MODERN.has(version)) {
    options.versionNegotiation = { mode: 'auto' };
  }
  const client = new Client(CLIENT_INFO, options);
  for (const [method, handler] of Object.entries(handlers)) {
    client.setRequestHandler(method, handler);
  }
  const command = process.env.MCP_CONFORMANCE_SERVER_COMMAND;
  let transport;
  if (command) {
    const argv = JSON.parse(command);
    transport = new StdioClientTransport({ command: argv[0], args: argv.slice(1), stderr: 'inherit' });
  } else {
    transport = new StreamableHTTPClientTransport(new URL(process.argv.at(-1)));
  }
  await client.connect(transport);
  return client;
}

function stubArguments(schema) {
  const samples = { string: 'us-west1', integer: 1, number: 1.5, boolean: true };
  const properties = schema?.properties ?? {};
  return Object.fromEntries(
    (schema?.required ?? []).map(name => [name, samples[properties[name]?.type] ?? 'x'])
  );
}

async function call(client, name, args) {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) {
    throw new Error(`tool ${name} answered an error: ${JSON.stringify(result.content)}`);
  }
  return result;
}

async function session(options, steps) {
  const client = await connect(options);
  try {
    await steps(client);
  } finally {
    await client.close();
  }
}

// -- the scenarios ---------------------------------------------------------------------------------
const SCENARIOS = {};
function scenario(names, fn) {
  for (const name of names) SCENARIOS[name] = fn;
}

scenario(['initialize', 'json-schema-ref-no-deref'], () =>
  session({}, async client => {
    await client.listTools();
  })
);

scenario(['tools_call'], () =>
  session({}, async client => {
    await client.listTools();
    await call(client, 'add_numbers', { a: 5, b: 3 });
  })
);

// each kind of request that names something (the SDK adds Mcp-Method and Mcp-Name)
scenario(['http-standard-headers'], () =>
  session({}, async client => {
    for (const tool of (await client.listTools()).tools) {
      await call(client, tool.name, stubArguments(tool.inputSchema));
    }
    for (const resource of (await client.listResources()).resources) {
      await client.readResource({ uri: resource.uri });
    }
    for (const prompt of (await client.listPrompts()).prompts) {
      await client.getPrompt({ name: prompt.name });
    }
  })
);

scenario(['elicitation-sep1034-client-defaults'], () =>
  session(
    {
      capabilities: { elicitation: { form: { applyDefaults: true } } },
      handlers: { 'elicitation/create': acceptAsPrefilled }
    },
    async client => {
      await client.listTools();
      await call(client, 'test_client_elicitation_defaults', {});
    }
  )
);

scenario(['sampling'], () =>
  session(
    { capabilities: { sampling: {} }, handlers: { 'sampling/createMessage': answerSampling } },
    async client => {
      await client.listTools();
      await call(client, 'test_sampling', {});
    }
  )
);

scenario(['roots'], () =>
  session({ capabilities: { roots: {} }, handlers: { 'roots/list': oneRoot } }, async client => {
    await client.listTools();
    await call(client, 'test_roots', {});
  })
);

scenario(['request-metadata'], () =>
  session(
    {
      capabilities: { roots: {}, sampling: {}, elicitation: { form: {} } },
      handlers: { 'roots/list': oneRoot, 'sampling/createMessage': answerSampling, 'elicitation/create': confirm }
    },
    async client => {
      await client.listTools();
    }
  )
);

scenario(['http-invalid-tool-headers'], () =>
  session({}, async client => {
    for (const tool of (await client.listTools()).tools) {
      await call(client, tool.name, stubArguments(tool.inputSchema));
    }
  })
);

scenario(['http-custom-headers'], () =>
  session({}, async client => {
    const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || '{}');
    const kept = new Set((await client.listTools()).tools.map(tool => tool.name));
    for (const item of context.toolCalls ?? []) {
      if (!kept.has(item.name)) throw new Error(`the SDK did not keep the tool ${item.name}`);
      // (the tool may refuse an argument, the null one: its error is the server's to give)
      await client.callTool({ name: item.name, arguments: item.arguments ?? {} });
    }
  })
);

scenario(['sse-retry'], () =>
  session({}, async client => {
    await client.listTools();
    await call(client, 'test_reconnection', {});
  })
);

scenario(['json-schema-2020-12-preservation'], () =>
  session({}, async client => {
    const tools = (await client.listTools()).tools;
    const focal = tools.find(tool => tool.name === 'json_schema_2020_12_tool');
    await call(client, 'json_schema_echo', { schema: focal?.inputSchema });
  })
);

scenario(['sep-2322-client-request-state'], () =>
  session(
    { capabilities: { elicitation: { form: {} } }, handlers: { 'elicitation/create': confirm } },
    async client => {
      await client.listTools();
      for (const name of ['test_mrtr_echo_state', 'test_mrtr_unrelated', 'test_mrtr_no_state', 'test_mrtr_no_result_type']) {
        await call(client, name, {});
      }
    }
  )
);

scenario(['progress'], () =>
  session({}, async client => {
    await client.listTools();
    // asking for progress is the onprogress option: the SDK sends a progressToken in _meta
    const steps = [];
    const result = await client.callTool(
      { name: 'test_progress', arguments: {} },
      { onprogress: progress => steps.push(progress.progress) }
    );
    if (result.isError) throw new Error(`tool test_progress answered an error: ${JSON.stringify(result.content)}`);
    if (steps.length === 0) throw new Error('no notifications/progress reached the onprogress callback');
  })
);

async function main() {
  const name = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
  if (!process.env.MCP_CONFORMANCE_SERVER_COMMAND && process.argv.length < 3) {
    console.error('usage: client.mjs URL (or MCP_CONFORMANCE_SERVER_COMMAND for stdio)');
    return 2;
  }
  const fn = SCENARIOS[name];
  if (!fn) {
    const reason = name.startsWith('auth/') ? NOT_PLAYED['auth/*'] : 'no such scenario in this driver';
    console.error(`scenario '${name}' is not played by the TypeScript SDK driver: ${reason}`);
    return 2;
  }
  const timer = setTimeout(() => {
    console.error(`scenario '${name}' failed: not done within ${STEP_TIMEOUT_MS} ms`);
    process.exit(1);
  }, STEP_TIMEOUT_MS);
  try {
    await fn();
  } catch (error) {
    console.error(`scenario '${name}' failed: ${error?.name ?? 'Error'}: ${error?.message ?? error}`);
    return 1;
  } finally {
    clearTimeout(timer);
  }
  return 0;
}

process.exit(await main());
