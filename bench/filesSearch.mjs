// fs.search over a 20k-file tree (issue 16): the capability pack's `fs.search` called through the
// invocation pipeline (createInvoker + the files capability from packages/capabilities/dist), against
// `rg` (ripgrep) searching the same tree for the same pattern in the same run. Rounds interleave the
// two (order alternating), caches are warm (one untimed run of each first); medians per pattern and the
// target is the median of per-round ratios. Patterns match in a few files only, so both walk the whole
// tree and read every file (neither stops at a match limit); rg gets `--no-require-git` so it honours the
// tree's .gitignore outside a git repository, as fs.search does. CPU time (user+sys) per search is
// reported beside the wall time (fs.search: the whole process, workers included; rg: from /proc),
// as it depends less on what else the machine runs.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { median, rootDir } from './lib/util.mjs';

const DIRS = 200;
const FILES_PER_DIR = 100;
const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'const', 'function', 'return', 'value', 'index', 'result', 'export', 'import'];

/** 20,000 text files of ~2 KiB in 200 directories (a few binary ones, a .gitignore'd directory); the needle in 20 files. */
function makeTree(dir) {
  let seed = 42;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const line = () => Array.from({ length: 8 }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ');
  writeFileSync(join(dir, '.gitignore'), 'ignored/\n');
  for (let d = 0; d < DIRS; d++) {
    const sub = join(dir, `pkg${String(d).padStart(3, '0')}`, 'src');
    mkdirSync(sub, { recursive: true });
    for (let f = 0; f < FILES_PER_DIR; f++) {
      const lines = Array.from({ length: 40 }, line);
      if ((d * FILES_PER_DIR + f) % 1000 === 7) lines[20] = `const needle_${d}_${f} = 'zebraquartz';`;
      writeFileSync(join(sub, `file${f}.ts`), `${lines.join('\n')}\n`);
    }
  }
  mkdirSync(join(dir, 'ignored'));
  writeFileSync(join(dir, 'ignored', 'skip.ts'), "'zebraquartz'\n");
}

/** CPU time (user + sys, ms) of this process's reaped children, from /proc (10 ms ticks); undefined elsewhere. */
function childrenCpuMs() {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return undefined;
  }
}

function runRg(args) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const cpuBefore = childrenCpuMs();
    const child = spawn('rg', args, { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => (out += chunk));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 || code === 1 ? resolve({ ms: performance.now() - started, cpuMs: cpuBefore === undefined ? NaN : childrenCpuMs() - cpuBefore, lines: out.split('\n').filter(Boolean).length }) : reject(new Error(`rg exited ${code}`))));
  });
}

/** Runs the bench: `rounds` interleaved rounds per pattern. */
export async function benchFilesSearch({ rounds = 7, log = () => undefined } = {}) {
  if (spawnSync('sh', ['-c', 'command -v rg'], { stdio: 'ignore' }).status !== 0) throw new Error('rg (ripgrep) is not installed');
  const { createInvoker, createRegistry } = await import(pathToFileURL(join(rootDir, 'packages/capabilities/dist/index.js')).href);
  const { createFilesCapability } = await import(pathToFileURL(join(rootDir, 'packages/capabilities/dist/pack.js')).href);
  const dir = mkdtempSync(join(tmpdir(), 'capnode-bench-fs-'));
  try {
    log(`building the tree: ${DIRS * FILES_PER_DIR} files in ${DIRS} directories`);
    makeTree(dir);
    const invoker = createInvoker({ registry: createRegistry([createFilesCapability({ roots: [dir] })]) });
    const search = async (args) => {
      const started = performance.now();
      const cpuBefore = process.cpuUsage();
      const outcome = await invoker.invoke({ command: 'fs.search', args: { path: dir, maxMatches: 5000, ...args }, transport: 'internal' });
      const ms = performance.now() - started;
      const cpu = process.cpuUsage(cpuBefore);
      if (!outcome.result.ok) throw new Error(`fs.search failed: ${outcome.result.error.message}`);
      return { ms, cpuMs: (cpu.user + cpu.system) / 1000, lines: outcome.result.structured.count };
    };
    const patterns = [
      { name: 'literal', capnode: { pattern: 'zebraquartz' }, rg: ['-n', '--no-heading', '--no-require-git', 'zebraquartz', dir] },
      { name: 'regex', capnode: { pattern: 'needle_\\d+_\\d+ = ' }, rg: ['-n', '--no-heading', '--no-require-git', 'needle_\\d+_\\d+ = ', dir] },
    ];
    const results = [];
    for (const pattern of patterns) {
      // Warm the page cache and both paths once; also check they agree on what they find.
      const first = await search(pattern.capnode);
      const reference = await runRg(pattern.rg);
      if (first.lines !== reference.lines) throw new Error(`${pattern.name}: fs.search found ${first.lines} lines, rg ${reference.lines}`);
      const capnode = [];
      const rg = [];
      const ratios = [];
      const capnodeCpu = [];
      const rgCpu = [];
      for (let round = 0; round < rounds; round++) {
        let a;
        let b;
        if (round % 2 === 0) {
          a = await search(pattern.capnode);
          b = await runRg(pattern.rg);
        } else {
          b = await runRg(pattern.rg);
          a = await search(pattern.capnode);
        }
        capnode.push(a.ms);
        rg.push(b.ms);
        ratios.push(a.ms / b.ms);
        capnodeCpu.push(a.cpuMs);
        rgCpu.push(b.cpuMs);
      }
      const entry = { pattern: pattern.name, matches: first.lines, capnodeMs: median(capnode), rgMs: median(rg), ratio: median(ratios), capnodeCpuMs: median(capnodeCpu), rgCpuMs: median(rgCpu) };
      log(`${pattern.name}: fs.search ${entry.capnodeMs.toFixed(1)} ms, rg ${entry.rgMs.toFixed(1)} ms, ratio ${entry.ratio.toFixed(2)} (${entry.matches} matches); CPU (user+sys) per search: fs.search ${entry.capnodeCpuMs.toFixed(0)} ms, rg ${entry.rgCpuMs.toFixed(0)} ms`);
      results.push(entry);
    }
    return { files: DIRS * FILES_PER_DIR, rounds, patterns: results, ratio: Math.max(...results.map((entry) => entry.ratio)) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const report = await benchFilesSearch({ rounds: Number(process.env.BENCH_FILES_ROUNDS) || 7, log: (line) => console.log(line) });
  console.log(JSON.stringify(report, null, 2));
}
