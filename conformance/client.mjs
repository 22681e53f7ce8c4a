#!/usr/bin/env node
// The conformance client: the MCP client runtime (@capnode/mcp-client) driven the way the official
// suite's client scenarios expect. The suite starts a scenario server and runs
//
//   node conformance/client.mjs <server-url>        (MCP_CONFORMANCE_SCENARIO=<scenario>)
//
// The runtime connects the one configured server (Streamable HTTP, full grants), lists its tools,
// then this entry point calls what the scenario asks for. Exit code 0 when the scenario's client
// side completed, 1 otherwise; the verdict itself is the suite's (conformance/runClient.mjs).
// Imports the built package: run `pnpm --filter @capnode/mcp-client... build` first.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseMcpConfig } from '@capnode/mcp-client';
import { createMcpRuntime } from '@capnode/mcp-client/node';

const SERVER = 'conformance';

/** What each scenario calls after connecting: tool name (on the server) and arguments, plus the text the result must contain. */
const SCENARIO_CALLS = {
  initialize: [],
  tools_call: [{ tool: 'add_numbers', args: { a: 5, b: 3 }, expect: 'The sum of 5 and 3 is 8' }],
  'sse-retry': [{ tool: 'test_reconnection', args: {}, expect: 'Reconnection test completed successfully' }],
  'elicitation-sep1034-client-defaults': [{ tool: 'test_client_elicitation_defaults', args: {} }],
};

function log(message) {
  process.stderr.write(`[conformance-client] ${message}\n`);
}

/** The runtime's logger, everything on stderr (stdout stays free for the suite). */
const logger = {
  debug: (message) => log(`debug: ${message}`),
  info: (message) => log(`info: ${message}`),
  warn: (message) => log(`warn: ${message}`),
  error: (message) => log(`error: ${message}`),
};

/**
 * The server's `auth` entry for the scenario: what a user would configure. The suite hands
 * pre-registered credentials in MCP_CONFORMANCE_CONTEXT; `client_metadata_url` is the client ID
 * metadata document the suite's authorization servers expect where they support one.
 */
function authFor(scenario, tokenDir) {
  if (!scenario.startsWith('auth/')) return undefined;
  const context = process.env.MCP_CONFORMANCE_CONTEXT ? JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT) : {};
  const auth = { type: 'oauth', client_metadata_url: 'https://conformance-test.local/client-metadata.json' };
  if (context.client_id) auth.client_id = context.client_id;
  if (context.client_secret) auth.client_secret = context.client_secret;
  if (scenario.startsWith('auth/client-credentials')) {
    delete auth.client_metadata_url;
    auth.grant = 'client_credentials';
  }
  if (context.private_key_pem) {
    // private_key_jwt: the key goes into a 0600 file, as a user would keep it.
    auth.private_key_path = join(tokenDir, 'client-key.pem');
    writeFileSync(auth.private_key_path, context.private_key_pem, { mode: 0o600 });
    if (context.signing_algorithm) auth.signing_algorithm = context.signing_algorithm;
  }
  return auth;
}

/**
 * The browser step, scripted: the suite's authorization servers approve at once and answer the
 * authorization URL with a redirect to the runtime's loopback listener, which this follows.
 */
async function scriptedBrowser({ url, signal }) {
  const approval = await fetch(url, { redirect: 'manual', signal });
  const location = approval.headers.get('location');
  await approval.body?.cancel();
  if (!location) throw new Error(`the authorization endpoint answered ${approval.status} without a redirect`);
  const callback = await fetch(location, { signal });
  await callback.body?.cancel();
}

function configFor(url, scenario, tokenDir) {
  const auth = authFor(scenario, tokenDir);
  const { config, warnings } = parseMcpConfig({
    servers: [{ name: SERVER, url, transport: 'http', connect_timeout_secs: 20, tool_timeout_secs: 20, ...(auth ? { auth } : {}) }],
    bundles: { all: { servers: [SERVER] } },
    agents: { conformance: { mcp_bundles: ['all'], risk_profile: 'full' } },
    risk_profiles: { full: { autonomy: 'full' } },
  });
  for (const warning of warnings) log(`config warning: ${warning.path}: ${warning.message}`);
  return config;
}

async function main() {
  const url = process.argv.at(-1);
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? 'initialize';
  if (!url || !/^https?:\/\//.test(url)) throw new Error('usage: client.mjs <server-url> (MCP_CONFORMANCE_SCENARIO names the scenario)');
  // Scenarios this entry point does not know (auth/*) still get the generic flow: connect, list, call every tool.
  const planned = SCENARIO_CALLS[scenario];
  log(`scenario ${scenario} against ${url}`);

  const tokenDir = mkdtempSync(join(tmpdir(), 'capnode-conformance-oauth-'));
  try {
    const runtime = await createMcpRuntime(configFor(url, scenario, tokenDir), {
      agent: 'conformance',
      logger,
      clientInfo: { name: 'capnode-conformance-client', version: '0.1.0' },
      oauth: { dir: tokenDir, authorize: scriptedBrowser, callbackTimeoutMs: 10_000 },
    });
    try {
      await runScenario(runtime, planned);
    } finally {
      await runtime.close(); // Node 20 has no `await using` in plain JavaScript
    }
  } finally {
    rmSync(tokenDir, { recursive: true, force: true });
  }
}

async function runScenario(runtime, planned) {
  const [diagnostic] = runtime.diagnostics();
  if (diagnostic?.state !== 'connected') throw new Error(`server did not connect: ${diagnostic?.state ?? 'no diagnostic'}: ${diagnostic?.error ?? ''}`);
  log(`connected over ${diagnostic.transport}; ${diagnostic.toolCount} tool(s)`);

  const tools = await runtime.tools();
  const calls = planned ?? Object.values(tools).filter((t) => t.server === SERVER).map((t) => ({ tool: t.tool, args: {} }));
  let failed = false;
  for (const { tool, args, expect } of calls) {
    const exposed = Object.values(tools).find((t) => t.server === SERVER && t.tool === tool);
    if (!exposed) throw new Error(`the server listed no tool '${tool}' (have: ${Object.keys(tools).join(', ') || 'none'})`);
    const result = await exposed.execute(args);
    const text = result.content.map((c) => c.text).join('\n');
    log(`${exposed.name} -> ${result.isError ? 'error' : 'ok'}: ${text.slice(0, 300)}`);
    if (result.isError || (expect !== undefined && !text.includes(expect))) failed = true;
  }
  if (failed) throw new Error('a tool call did not return the expected result');
}

main().then(
  () => process.exit(0),
  (error) => {
    log(`failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
