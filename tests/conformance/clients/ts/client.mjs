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

import { randomUUID } from 'node:crypto';
import {
  Client,
  ClientCredentialsProvider,
  PrivateKeyJwtProvider,
  StreamableHTTPClientTransport,
  UnauthorizedError
} from '@modelcontextprotocol/client';
import { SkillsClient, SkillVerificationError } from '@modelcontextprotocol/client/ext/skills';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const CLIENT_INFO = { name: 'mcp-typescript-sdk-conformance-driver', version: '1.0.0' };
const STEP_TIMEOUT_MS = 20000; // the whole scenario; the harness kills the process later
const MODERN = new Set(['2026-07-28']);

export const NOT_PLAYED = {
  'auth/enterprise-managed-authorization':
    "an extension (SEP-990): the driver does not play the identity provider's token exchange",
  'auth/dpop': 'an extension (DPoP): not played by this driver',
  'auth/dpop-nonce': 'an extension (DPoP): not played by this driver',
  'auth/wif-jwt-bearer': 'an extension (workload identity federation): not played by this driver'
};
// The application's OAuth client: where the authorization server sends the user agent back (never
// reached: the provider reads the code from the Location header), and the URL of its client ID
// metadata document (the one the official suite's auth/basic-cimd expects).
const REDIRECT_URI = 'http://localhost:3000/callback';
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';
const AUTHORIZATION_ROUNDS = 3; // authorizations one run may need (the first, a step-up, a retry)

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
// a URL-mode elicitation answered as a user who consents to open the page (out of band: this
// headless application opens nothing); a form is declined
const consentToUrl = async request =>
  request.params?.mode === 'url' ? { action: 'accept' } : { action: 'decline' };

// -- connecting ------------------------------------------------------------------------------------
async function connect({ capabilities = {}, handlers = {}, transport: given } = {}) {
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
  let transport = given;
  if (transport) {
    // (given: the authorization scenarios' transport, with its auth provider)
  } else if (command) {
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

// a legacy server refuses the modern request: the SDK's auto mode falls back by itself
scenario(['discover-fallback', 'discover-fallback-any-error'], () =>
  session({}, async client => {
    await client.listTools();
  })
);

// list the tools as often as the context says, list the resources and read each one
scenario(['caching-hints'], () =>
  session({}, async client => {
    const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || '{}');
    for (let i = 0; i < (context.listTools ?? 2); i++) await client.listTools();
    for (const resource of (await client.listResources()).resources) {
      await client.readResource({ uri: resource.uri });
    }
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

// give up on the slow tool after the context's cancelAfterMs: the SDK's request timeout, on whose
// expiry the SDK cancels the request itself
scenario(['cancellation'], () =>
  session({}, async client => {
    const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || '{}');
    const name = context.tool ?? 'test_slow';
    const after = context.cancelAfterMs ?? 1000;
    await client.listTools();
    let result;
    try {
      result = await client.callTool({ name, arguments: {} }, { timeout: after });
    } catch (error) {
      if (/timed out|timeout/i.test(String(error?.message))) return; // given up (and cancelled)
      throw error;
    }
    throw new Error(`${name} answered within ${after} ms (it was to be given up on): ${JSON.stringify(result)}`);
  })
);

scenario(['elicitation-url'], () =>
  session(
    { capabilities: { elicitation: { url: {} } }, handlers: { 'elicitation/create': consentToUrl } },
    async client => {
      await client.listTools();
      await call(client, 'test_url_elicitation', {});
    }
  )
);

// the skills extension (SEP-2640), host side, with the SDK's SkillsClient: list the skills and load
// none; or load the first (its SKILL.md, then every other file its entry lists), which the SDK
// verifies: a SkillVerificationError is the skill refused (the scenario's point, exit 0)
scenario(['sep-2640-client-no-prefetch'], () =>
  session({}, async client => {
    const skills = new SkillsClient(client);
    if (!skills.supported) throw new Error('the server does not declare the skills extension');
    const listing = await skills.list();
    if (listing.skills.length === 0) throw new Error('the server lists no skill');
  })
);

scenario(['sep-2640-client-verify-digest', 'sep-2640-client-verify-size', 'sep-2640-client-verify-frontmatter'], () =>
  session({}, async client => {
    const skills = new SkillsClient(client);
    const [skill] = (await skills.list()).skills;
    if (!skill) throw new Error('the server lists no skill');
    try {
      await skills.read(skill);
    } catch (error) {
      if (error instanceof SkillVerificationError) {
        console.error(`the SDK refused the skill: ${error.reason}: ${error.message}`);
        return;
      }
      throw error;
    }
    for (const entry of Array.isArray(skill.resources) ? skill.resources : []) {
      if (entry.uri !== skill.uri) await skills.read(skill, entry.uri);
    }
    throw new Error(`the SDK verified ${skill.uri}'s SKILL.md and the skill was used`);
  })
);

// -- authorization (auth/*, HTTP only) ------------------------------------------------------------
// The SDK's OAuthClientProvider, in memory, with the user's browser automated: the authorization
// URL is followed with one GET (redirect: 'manual'; the scenario's authorization server approves at
// once) and the redirect's Location gives the callback's parameters (code, state, iss). No
// discovery state is kept: the SDK discovers again on each authorization (a changed
// authorization_servers list is then seen; the SDK never invalidates a kept one itself).
class AutomatedOAuthProvider {
  constructor(registered) {
    this._client = registered;
    this._tokens = undefined;
    this._verifier = undefined;
    this._states = new Set(); // every state sent (the SDK may authorize for two refused requests at once)
    this.callback = undefined; // the URLSearchParams of the last redirect, for finishAuth
    this.clientMetadataUrl = CLIENT_METADATA_URL;
  }
  get redirectUrl() {
    return REDIRECT_URI;
  }
  get clientMetadata() {
    return {
      client_name: CLIENT_INFO.name,
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code']
    };
  }
  state() {
    const state = randomUUID();
    this._states.add(state);
    return state;
  }
  clientInformation() {
    return this._client;
  }
  saveClientInformation(information) {
    this._client = information;
  }
  tokens() {
    return this._tokens;
  }
  saveTokens(tokens) {
    this._tokens = tokens;
  }
  saveCodeVerifier(verifier) {
    this._verifier = verifier;
  }
  codeVerifier() {
    if (!this._verifier) throw new Error('no PKCE code verifier saved');
    return this._verifier;
  }
  invalidateCredentials(scope) {
    if (scope === 'all' || scope === 'tokens') this._tokens = undefined;
    if (scope === 'all' || scope === 'client') this._client = undefined;
    if (scope === 'all' || scope === 'verifier') this._verifier = undefined;
  }
  async redirectToAuthorization(authorizationUrl) {
    const verifier = this._verifier; // this flow's (saved just before): the one its code is exchanged with
    const response = await fetch(authorizationUrl, { redirect: 'manual' });
    const location = response.headers.get('location');
    if (response.status < 300 || response.status > 399 || !location) {
      throw new Error(`the authorization endpoint answered ${response.status}, not a redirect`);
    }
    const params = new URL(location).searchParams;
    if (!params.get('code')) throw new Error(`the redirect carries no code (error: ${params.get('error')})`);
    // the SDK leaves state to the application: the redirect must bring back the one sent
    if (!this._states.has(params.get('state'))) throw new Error('the redirect brought back another state');
    this.callback = params;
    this._verifier = verifier;
  }
}

function authorizationProvider(name, context) {
  if (name === 'auth/client-credentials-basic') {
    return new ClientCredentialsProvider({ clientId: context.client_id, clientSecret: context.client_secret });
  }
  if (name === 'auth/client-credentials-jwt') {
    return new PrivateKeyJwtProvider({
      clientId: context.client_id,
      privateKey: context.private_key_pem,
      algorithm: context.signing_algorithm ?? 'ES256'
    });
  }
  // the authorization code flow with PKCE: pre-registered when the context gives a client_id, else
  // a client ID metadata document or dynamic registration, as the authorization server offers
  const registered = context.client_id
    ? {
        client_id: context.client_id,
        ...(context.client_secret ? { client_secret: context.client_secret } : {}),
        redirect_uris: [REDIRECT_URI],
        token_endpoint_auth_method: context.client_secret ? 'client_secret_basic' : 'none'
      }
    : undefined;
  return new AutomatedOAuthProvider(registered);
}

// Connect through the SDK's OAuth support (the transport follows the server's 401 or 403
// challenge), list the tools and call each (a tool's own error answer is the server's to give).
// When the SDK sent the user agent to authorize (UnauthorizedError), the callback's parameters go
// to finishAuth and the session starts again.
async function authorizedSession(name) {
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || '{}');
  const provider = authorizationProvider(name, context);
  for (let round = 1; ; round++) {
    const transport = new StreamableHTTPClientTransport(new URL(process.argv.at(-1)), { authProvider: provider });
    let client;
    try {
      client = await connect({ transport });
      for (const tool of (await client.listTools()).tools) {
        await client.callTool({ name: tool.name, arguments: stubArguments(tool.inputSchema) });
      }
      return;
    } catch (error) {
      const callback = provider.callback;
      if (!(error instanceof UnauthorizedError) || !callback || round >= AUTHORIZATION_ROUNDS) throw error;
      provider.callback = undefined;
      await transport.finishAuth(callback);
    } finally {
      await (client ?? transport).close().catch(() => {});
    }
  }
}

async function main() {
  const name = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
  if (!process.env.MCP_CONFORMANCE_SERVER_COMMAND && process.argv.length < 3) {
    console.error('usage: client.mjs URL (or MCP_CONFORMANCE_SERVER_COMMAND for stdio)');
    return 2;
  }
  let fn = SCENARIOS[name];
  if (!fn && name.startsWith('auth/') && !(name in NOT_PLAYED)) fn = () => authorizedSession(name);
  if (!fn) {
    const reason = NOT_PLAYED[name] ?? 'no such scenario in this driver';
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
