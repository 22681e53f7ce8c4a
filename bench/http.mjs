// tools/call over loopback HTTP: capnode's production stack vs a bare node:http responder, same load
// generator and settings, measured in the same run.
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchDir, median, missingDists, startChild } from './lib/util.mjs';

const CLOCK_TICKS_PER_SEC = 100;

/**
 * User + system CPU seconds of a process from /proc (Linux; undefined elsewhere). Server CPU per
 * request is far less sensitive to other load on the machine than requests per second.
 */
function processCpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SEC;
  } catch {
    return undefined;
  }
}

/** Median of each per-round statistic; counts of failures are summed. */
function aggregate(list) {
  const statusCodes = {};
  for (const s of list) for (const [code, n] of Object.entries(s.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
  const med = (key) => median(list.map((s) => s[key]));
  const sum = (key) => list.reduce((acc, s) => acc + s[key], 0);
  return {
    requestsPerSec: med('requestsPerSec'),
    p50Ms: med('p50Ms'),
    p90Ms: med('p90Ms'),
    p99Ms: med('p99Ms'),
    maxMs: Math.max(...list.map((s) => s.maxMs)),
    loadgenCpu: med('loadgenCpu'),
    serverCpuUsPerReq: med('serverCpuUsPerReq'),
    completed: sum('completed'),
    non2xx: sum('non2xx'),
    errors: sum('errors'),
    timeouts: sum('timeouts'),
    statusCodes,
  };
}

const LEGACY_VERSION = '2025-11-25';
const MODERN_VERSION = '2026-07-28';
const ECHO_TEXT = 'hello';

/** The two request forms a real client sends; `[<id>]` is replaced by autocannon with a fresh id per request. */
export const forms = {
  '2025': {
    label: `2025-11-25 sessionless`,
    headers: (token) => ({
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
      'mcp-protocol-version': LEGACY_VERSION,
    }),
    body: (id) =>
      JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'bench.echo', arguments: { text: ECHO_TEXT } } }),
  },
  '2026': {
    label: `2026-07-28 per-request`,
    headers: (token) => ({
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
      'mcp-protocol-version': MODERN_VERSION,
      'mcp-method': 'tools/call',
      'mcp-name': 'bench.echo',
    }),
    body: (id) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: {
          name: 'bench.echo',
          arguments: { text: ECHO_TEXT },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
            'io.modelcontextprotocol/clientCapabilities': {},
            'io.modelcontextprotocol/clientInfo': { name: 'capnode-bench', version: '0.0.0' },
          },
        },
      }),
  },
};

/** Parses a JSON or SSE response body into the JSON-RPC messages it carries. */
function messagesOf(contentType, text) {
  if (contentType?.includes('text/event-stream')) {
    return text
      .split(/\r?\n\r?\n/)
      .map((event) =>
        event
          .split(/\r?\n/)
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trimStart())
          .join('\n'),
      )
      .filter(Boolean)
      .map((data) => JSON.parse(data));
  }
  return text ? [JSON.parse(text)] : [];
}

async function post(url, headers, body) {
  const response = await fetch(url, { method: 'POST', headers, body });
  const text = await response.text();
  let messages = [];
  try {
    messages = messagesOf(response.headers.get('content-type'), text);
  } catch {
    // Reported below through `text`.
  }
  return { status: response.status, headers: response.headers, text, messages };
}

/**
 * Sends one request of `form` and checks it is answered with the echoed text. Falls back to a
 * session (initialize + Mcp-Session-Id) for the 2025 form when the server refuses sessionless calls.
 */
async function probe(url, token, formKey) {
  const form = forms[formKey];
  const headers = form.headers(token);
  const check = (reply) => {
    const message = reply.messages.find((m) => m.id === 'probe-1' || m.id === 'probe-2');
    const text = message?.result?.content?.[0]?.text;
    if (reply.status === 200 && text === ECHO_TEXT && !message.result.isError) return undefined;
    return `HTTP ${reply.status}: ${reply.text.slice(0, 300)}`;
  };
  const first = await post(url, headers, form.body('probe-1'));
  const problem = check(first);
  if (!problem) return { ok: true, mode: 'sessionless', headers };
  if (formKey !== '2025') return { ok: false, detail: problem };

  const init = await post(
    url,
    headers,
    JSON.stringify({
      jsonrpc: '2.0',
      id: 'init',
      method: 'initialize',
      params: { protocolVersion: LEGACY_VERSION, capabilities: {}, clientInfo: { name: 'capnode-bench', version: '0.0.0' } },
    }),
  );
  const sessionId = init.headers.get('mcp-session-id');
  if (init.status !== 200 || !sessionId) return { ok: false, detail: `sessionless: ${problem}; initialize: HTTP ${init.status}` };
  const sessionHeaders = { ...headers, 'mcp-session-id': sessionId };
  await post(url, sessionHeaders, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  const second = check(await post(url, sessionHeaders, form.body('probe-2')));
  if (second) return { ok: false, detail: `sessionless: ${problem}; in session: ${second}` };
  return { ok: true, mode: 'session (server refused sessionless calls)', headers: sessionHeaders };
}

export function startLoadgen() {
  const child = fork(join(benchDir, 'loadgen.mjs'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let next = 0;
  const pending = new Map();
  child.on('message', (message) => {
    const entry = pending.get(message.id);
    if (!entry) return;
    pending.delete(message.id);
    if (message.ok) entry.resolve(message.stats);
    else entry.reject(new Error(message.error));
  });
  child.on('exit', (code) => {
    for (const entry of pending.values()) entry.reject(new Error(`load generator exited with code ${code}`));
    pending.clear();
  });
  return {
    run(job) {
      const id = ++next;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        child.send({ ...job, id });
      });
    },
    stop: () => child.connected && child.disconnect(),
  };
}

/**
 * Runs the HTTP section: every target in `rounds` interleaved slices per connection count (order
 * rotated each round). Returns { runs, skipped }: each run is { target, form, mode, connections,
 * stats (per-round medians), ratio (median per-round req/s ratio to bare), cpuRatio (median per-round
 * bare server CPU per request / this server's), rounds }, and `skipped` lists human-readable reasons.
 */
export async function benchHttp({ connections, durationSec, warmupSec, rounds, log }) {
  const skipped = [];
  const targets = [];
  const children = [];
  const loadgen = startLoadgen();
  try {
    const bare = await startChild(join(benchDir, 'servers/bare.mjs'));
    children.push(bare);
    for (const formKey of Object.keys(forms)) {
      const p = await probe(bare.info.url, 'unused', formKey);
      if (!p.ok) throw new Error(`bare responder failed its probe: ${p.detail}`);
      targets.push({ target: 'bare', formKey, mode: 'sessionless', url: bare.info.url, headers: p.headers, pid: bare.child.pid });
    }

    const missing = missingDists('capabilities', 'mcpServerNode');
    if (missing.length) {
      skipped.push(`capnode HTTP: SKIP, not built (${missing.join(', ')}); run \`pnpm bench\` or \`pnpm turbo run build\``);
    } else {
      let capnode;
      try {
        capnode = await startChild(join(benchDir, 'servers/capnode.mjs'));
        children.push(capnode);
      } catch (error) {
        skipped.push(`capnode HTTP: SKIP, server did not start: ${error.message.split('\n').slice(0, 6).join(' | ')}`);
      }
      if (capnode) {
        for (const formKey of Object.keys(forms)) {
          const p = await probe(capnode.info.url, capnode.info.token, formKey);
          if (p.ok) targets.push({ target: 'capnode', formKey, mode: p.mode, url: capnode.info.url, headers: p.headers, pid: capnode.child.pid });
          else skipped.push(`capnode ${forms[formKey].label}: SKIP, probe failed: ${p.detail}`);
        }
      }
    }

    const runs = [];
    for (const conns of connections) {
      const samples = targets.map(() => []);
      for (let round = 0; round < rounds; round++) {
        const order = targets.map((_, i) => (i + round) % targets.length);
        log?.(`  ${conns} connections, round ${round + 1}/${rounds} ...`);
        for (const i of order) {
          const t = targets[i];
          const job = { url: t.url, headers: t.headers, body: forms[t.formKey].body('[<id>]'), idReplacement: true, connections: conns };
          await loadgen.run({ ...job, durationSec: round === 0 ? warmupSec : Math.min(warmupSec, 0.5), discard: true });
          samples[i].push(await measureSlice(loadgen, t, { ...job, durationSec }));
        }
      }
      collect(targets, samples, conns, runs);
    }
    const equalLoad = await measureEqualLoad({ targets, runs, connections: Math.min(...connections), durationSec, rounds, loadgen, log });
    return { runs, skipped, equalLoad };
  } finally {
    loadgen.stop();
    await Promise.all(children.map((c) => c.stop()));
  }
}

/** One slice of `job` on `t`, with the server's CPU per request from /proc. */
async function measureSlice(loadgen, t, job) {
  const cpuBefore = processCpuSeconds(t.pid);
  const stats = await loadgen.run(job);
  const cpuAfter = processCpuSeconds(t.pid);
  stats.serverCpuUsPerReq = cpuBefore === undefined || cpuAfter === undefined ? NaN : ((cpuAfter - cpuBefore) * 1e6) / stats.completed;
  return stats;
}

/**
 * Informational: the cpu ratio with both servers at the same offered load (autocannon's
 * `overallRate`, half of what capnode reached closed-loop), so neither saturates and the load
 * generator is in the same state for both. In the closed-loop rounds the bare responder keeps the
 * generator busy (> 90 % of a core) while capnode leaves it idle half the time, and every response
 * written to an idle generator pays its wake-up in the server's system time. At half the rate both
 * servers also wake more often per request, a fixed cost both pay that pulls this ratio toward 1, so
 * it is a bound from the other side, not a target. Returns [{ form, rate, cpuRatio, bareUs, capnodeUs }].
 */
async function measureEqualLoad({ targets, runs, connections, durationSec, rounds, loadgen, log }) {
  const results = [];
  for (const formKey of Object.keys(forms)) {
    const bare = targets.find((t) => t.target === 'bare' && t.formKey === formKey);
    const capnode = targets.find((t) => t.target === 'capnode' && t.formKey === formKey);
    const closed = runs.find((r) => r.target === 'capnode' && r.form === formKey && r.connections === connections);
    if (!bare || !capnode || !closed) continue;
    const rate = Math.max(100, Math.round(closed.stats.requestsPerSec / 2 / 100) * 100);
    log?.(`  equal offered load, ${forms[formKey].label}: ${rate} req/s ...`);
    const per = { bare: [], capnode: [] };
    for (let round = 0; round < rounds; round++) {
      for (const t of round % 2 === 0 ? [bare, capnode] : [capnode, bare]) {
        const job = { url: t.url, headers: t.headers, body: forms[formKey].body('[<id>]'), idReplacement: true, connections, overallRate: rate };
        per[t.target].push((await measureSlice(loadgen, t, { ...job, durationSec })).serverCpuUsPerReq);
      }
    }
    results.push({
      form: formKey,
      formLabel: forms[formKey].label,
      rate,
      bareUs: median(per.bare),
      capnodeUs: median(per.capnode),
      cpuRatio: median(per.bare.map((b, r) => b / per.capnode[r])),
    });
  }
  return results;
}

/** Appends one run per target for `conns`: per-round medians and ratios against bare of the same form. */
function collect(targets, samples, conns, runs) {
  targets.forEach((t, i) => {
    const bareIndex = targets.findIndex((b) => b.target === 'bare' && b.formKey === t.formKey);
    const ratios = samples[i].map((s, r) => s.requestsPerSec / samples[bareIndex][r].requestsPerSec);
    const cpuRatios = samples[i].map((s, r) => samples[bareIndex][r].serverCpuUsPerReq / s.serverCpuUsPerReq);
    runs.push({
      target: t.target,
      form: t.formKey,
      formLabel: forms[t.formKey].label,
      mode: t.mode,
      connections: conns,
      stats: aggregate(samples[i]),
      ratio: median(ratios),
      cpuRatio: median(cpuRatios),
      rounds: samples[i],
    });
  });
}
