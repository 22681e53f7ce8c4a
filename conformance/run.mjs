#!/usr/bin/env node
// Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned as a root
// devDependency) against a fixture server on a free loopback port and prints a summary.
//
//   node conformance/run.mjs                 # capnode's production HTTP stack (conformance/server.mjs)
//   node conformance/run.mjs --server sdk    # the SDK's own server (conformance/sdkServer.mjs), for comparison
//   node conformance/run.mjs --scenario ping # one scenario
//
// The suite needs Node 22. It runs under the current node when that is >= 22, under $CONFORMANCE_NODE
// when set (a path to a Node 22 binary), and otherwise through `npx -y node@22` (npm registry only).
// Exit code: 0 when every required scenario passed or fails only in a documented known deviation
// (KNOWN_DEVIATIONS, capnode only); 1 otherwise, or when a known deviation went stale. Raw results:
// conformance/results/<server>/.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { node22Command, runSuite } from './suite.mjs';

const here = dirname(fileURLToPath(import.meta.url));

/** Scenarios the brief requires to pass: initialize, ping, tools, logging, progress, DNS rebinding. */
export const REQUIRED = [
  'server-initialize',
  'ping',
  'logging-set-level',
  'tools-list',
  'tools-call-simple-text',
  'tools-call-image',
  'tools-call-audio',
  'tools-call-embedded-resource',
  'tools-call-mixed-content',
  'tools-call-with-logging',
  'tools-call-error',
  'tools-call-with-progress',
  'json-schema-2020-12',
  'dns-rebinding-protection',
];

/**
 * Checks of required scenarios that fail by design, with the reason (see README.md). A required
 * scenario whose only failing checks are listed here counts as a known deviation, not a failure; a
 * listed check that starts passing is reported as stale so this list stays true.
 */
export const KNOWN_DEVIATIONS = {
  'dns-rebinding-protection': {
    checks: ['localhost-host-valid-accepted'],
    reason:
      'the spec refuses every request that carries an Origin header (403), loopback origins included; the suite expects 2xx for Origin http://127.0.0.1:<port>. The rebinding check itself (evil Host/Origin -> 4xx) passes',
  },
};

/** Scenarios outside capnode's surface, with the reason; reported, never required. */
export const NOT_APPLICABLE = {
  'completion-complete': 'capnode serves tools only; completion applies to prompts and resource templates',
  'tools-call-sampling': 'commands cannot ask the client to sample (deprecated in 2026-07-28); elicitation is used only to put approvals to the user',
  'tools-call-elicitation': 'no command elicits on its own; capnode elicits only to put a pending approval to the user',
  'elicitation-sep1034-defaults': 'no elicitation (see tools-call-elicitation)',
  'elicitation-sep1330-enums': 'no elicitation (see tools-call-elicitation)',
  'server-sse-polling': 'needs resumable SSE (an event store and Last-Event-ID replay); capnode sessions carry notifications but do not replay missed events',
  'server-sse-multiple-streams': 'needs several concurrent standalone streams per session; a capnode session has one (a second GET gets 409, as the SDK transport answers)',
  'resources-list': 'capnode serves tools only (no resources capability)',
  'resources-read-text': 'capnode serves tools only (no resources capability)',
  'resources-read-binary': 'capnode serves tools only (no resources capability)',
  'resources-templates-read': 'capnode serves tools only (no resources capability)',
  'resources-subscribe': 'capnode serves tools only (no resources capability)',
  'resources-unsubscribe': 'capnode serves tools only (no resources capability)',
  'prompts-list': 'capnode serves tools only (no prompts capability)',
  'prompts-get-simple': 'capnode serves tools only (no prompts capability)',
  'prompts-get-with-args': 'capnode serves tools only (no prompts capability)',
  'prompts-get-embedded-resource': 'capnode serves tools only (no prompts capability)',
  'prompts-get-with-image': 'capnode serves tools only (no prompts capability)',
};

function parseArgs(argv) {
  const args = { server: 'capnode', scenario: undefined, verbose: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--server') args.server = argv[++i];
    else if (arg === '--scenario') args.scenario = argv[++i];
    else if (arg === '--verbose') args.verbose = true;
    else throw new Error(`unknown argument '${arg}' (use --server capnode|sdk, --scenario NAME, --verbose)`);
  }
  if (!['capnode', 'sdk'].includes(args.server)) throw new Error(`--server must be capnode or sdk, got '${args.server}'`);
  return args;
}

/** Starts a fixture server and resolves with its URL and a stop function. */
function startServer(which) {
  const script = join(here, which === 'sdk' ? 'sdkServer.mjs' : 'server.mjs');
  const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'pipe'] });
  const killChild = () => child.kill('SIGKILL');
  process.once('exit', killChild);
  process.once('SIGINT', () => process.exit(130));
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error('fixture server did not report `listening <url>` within 30 s')), 30_000);
    const fail = (error) => {
      clearTimeout(timer);
      child.kill();
      reject(new Error(`${error.message}\n${stderr}`));
    };
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /listening (\S+)/.exec(out);
      if (!match) return;
      clearTimeout(timer);
      resolve({
        url: match[1],
        stderr: () => stderr,
        stop: () =>
          new Promise((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', done);
            child.kill('SIGTERM');
            setTimeout(() => child.kill('SIGKILL'), 5000).unref();
          }),
      });
    });
    child.once('error', fail);
    child.once('exit', (code) => fail(new Error(`fixture server exited early with code ${code}`)));
  });
}

function runServerSuite(url, outDir, scenario, verbose) {
  const suiteArgs = ['server', '--url', url, '-o', outDir, ...(scenario ? ['--scenario', scenario] : ['--suite', 'all'])];
  return runSuite(node22Command(), suiteArgs, { verbose, timeoutMs: 300_000 });
}

/** Reads `<outDir>/server-<scenario>-<timestamp>/checks.json` into a map scenario → checks. */
function readResults(outDir) {
  const results = new Map();
  if (!existsSync(outDir)) return results;
  for (const entry of readdirSync(outDir)) {
    const match = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(entry);
    const file = join(outDir, entry, 'checks.json');
    if (!match || !existsSync(file)) continue;
    results.set(match[1], JSON.parse(readFileSync(file, 'utf8')));
  }
  return results;
}

function summarize(checks) {
  const failed = checks.filter((c) => c.status === 'FAILURE');
  const passed = checks.filter((c) => c.status === 'SUCCESS').length;
  const warnings = checks.filter((c) => c.status === 'WARNING').length;
  return { passed, failed, warnings };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const outDir = join(here, 'results', args.server);
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });

  const server = await startServer(args.server);
  console.log(`conformance: ${args.server} fixture server at ${server.url}`);
  let run;
  try {
    run = await runServerSuite(server.url, outDir, args.scenario, args.verbose);
  } finally {
    await server.stop();
  }
  const results = readResults(outDir);
  if (results.size === 0) {
    console.error(run.log.slice(-4000));
    console.error('conformance: the suite produced no results');
    process.exitCode = 1;
    return;
  }

  const rows = [];
  let requiredFailed = 0;
  let requiredPassed = 0;
  const known = [];
  const stale = [];
  for (const [scenario, checks] of [...results].sort(([a], [b]) => a.localeCompare(b))) {
    const { passed, failed, warnings } = summarize(checks);
    const required = REQUIRED.includes(scenario);
    const allowed = args.server === 'capnode' ? (KNOWN_DEVIATIONS[scenario]?.checks ?? []) : [];
    const unexpected = failed.filter((c) => !allowed.includes(c.id));
    const failedIds = new Set(failed.map((c) => c.id));
    for (const id of allowed) {
      if (checks.some((c) => c.id === id) && !failedIds.has(id)) stale.push(`${scenario}/${id}`);
    }
    let status = failed.length === 0 ? 'PASS' : unexpected.length === 0 ? 'KNOWN' : 'FAIL';
    if (required) {
      if (status === 'PASS') requiredPassed++;
      else if (status === 'KNOWN') known.push(...failed.map((c) => `${scenario}/${c.id}`));
      else requiredFailed++;
    }
    const kind = required ? 'required' : NOT_APPLICABLE[scenario] ? 'n/a' : 'other';
    let note = failed.map((c) => `${c.id}: ${c.errorMessage ?? 'failed'}`).join(' | ');
    if (status === 'PASS') note = warnings ? `${warnings} warning(s)` : '';
    else if (status === 'KNOWN') note = `known: ${KNOWN_DEVIATIONS[scenario].reason}`;
    else if (kind === 'n/a') note = `${NOT_APPLICABLE[scenario]}; ${note}`;
    rows.push({ scenario, kind, status, checks: `${passed}/${passed + failed.length}`, note });
  }
  for (const scenario of args.scenario ? [] : REQUIRED) {
    if (!results.has(scenario)) {
      requiredFailed++;
      rows.push({ scenario, kind: 'required', status: 'MISSING', checks: '-', note: 'scenario produced no result' });
    }
  }

  const width = Math.max(...rows.map((r) => r.scenario.length));
  console.log(`\n${'scenario'.padEnd(width)}  kind      status   checks  note`);
  for (const r of rows) {
    console.log(`${r.scenario.padEnd(width)}  ${r.kind.padEnd(8)}  ${r.status.padEnd(7)}  ${r.checks.padEnd(6)}  ${r.note.slice(0, 240)}`);
  }
  if (requiredFailed > 0 && args.server === 'capnode') console.log(`\nfixture server stderr (tail):\n${server.stderr().slice(-2000)}`);
  console.log(`\nraw results: ${outDir}`);
  if (known.length) console.log(`known deviations (conformance/README.md): ${known.join(', ')}`);
  if (stale.length) console.log(`stale known deviations, now passing; remove them from KNOWN_DEVIATIONS: ${stale.join(', ')}`);
  console.log(
    `conformance (${args.server}): required scenarios ${requiredPassed} passed, ${known.length ? `${new Set(known.map((k) => k.split('/')[0])).size} known deviation(s), ` : ''}${requiredFailed} failed`,
  );
  process.exitCode = requiredFailed > 0 || stale.length > 0 ? 1 : 0;
}

main().catch((error) => {
  console.error(`conformance: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
