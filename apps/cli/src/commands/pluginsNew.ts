import { chmodSync, existsSync, mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import type { Context } from '../context.js';
import { CliError } from '../errors.js';
import { version } from '../version.js';

const PACKAGE_NAME = /^(?:@[a-z0-9~][a-z0-9._~-]*\/)?[a-z0-9~][a-z0-9._~-]*$/;

function indexJs(category: string): string {
  return `import { defineCapability, defineCommand, definePlugin, z } from '@capnode/capabilities';

/**
 * A capnode plugin: a function of the host's PluginContext (this plugin's settings section, a logger,
 * a data directory, an AbortSignal aborted on unload) returning capabilities. Describe arguments with
 * the z exported by @capnode/capabilities.
 */
export default definePlugin((context) =>
  defineCapability({
    category: '${category}',
    commands: [
      defineCommand({
        name: '${category}.hello',
        description: 'Greets someone (an example command: replace it with yours).',
        input: z.object({ name: z.string().min(1).describe('Who to greet.').default('world') }),
        annotations: { readOnly: true, idempotent: true },
        execute: ({ name }) => {
          const greeting = typeof context.settings.greeting === 'string' ? context.settings.greeting : 'Hello';
          return \`\${greeting}, \${name}!\`;
        },
      }),
    ],
  }),
);
`;
}

function testJs(name: string, category: string, bin: string | undefined): string {
  return `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pluginDir = join(dirname(fileURLToPath(import.meta.url)), '..');
// The capnode CLI: CAPNODE_BIN (the path of its bin.js), else the capnode that made this project, else \`capnode\` on PATH.
const maker = ${JSON.stringify(bin ?? '')};
const bin = process.env.CAPNODE_BIN || (maker && existsSync(maker) ? maker : '');
const cli = bin ? [process.execPath, bin] : ['capnode'];

function start(args, env) {
  return spawn(cli[0], [...cli.slice(1), ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
}

function run(args, env) {
  const child = start(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

test('the plugin runs in a real capnode host and answers over MCP', async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'capnode-plugin-test-'));
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ plugins: [pluginDir], pluginSettings: { '${name}': { greeting: 'Hi' } } }), { mode: 0o600 });
  const env = { ...process.env, CAPNODE_HOME: home };
  delete env.CAPNODE_URL;
  delete env.CAPNODE_TOKEN;
  const serve = start(['serve', '--port', '0'], env);
  const exited = new Promise((resolve) => serve.on('close', resolve));
  t.after(async () => {
    serve.kill('SIGTERM');
    await exited;
    rmSync(home, { recursive: true, force: true });
  });
  let output = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(\`capnode serve did not get ready:\\n\${output}\`)), 20_000);
    const check = (chunk) => {
      output += chunk;
      const ready = /capnode ready: MCP on (\\S+)/.exec(output);
      if (ready) {
        clearTimeout(timer);
        resolve(ready[1]);
      }
    };
    serve.stdout.on('data', check);
    serve.stderr.on('data', (chunk) => (output += chunk));
    void exited.then((code) => reject(new Error(\`capnode serve exited (\${code}):\\n\${output}\`)));
  });
  const status = await run(['status', '--json', '--url', url], env);
  assert.equal(status.code, 0, status.stderr);
  const plugin = JSON.parse(status.stdout).plugins.find((entry) => entry.name === '${name}');
  assert.equal(plugin?.state, 'loaded', status.stdout);
  const call = await run(['--command', '${category}.hello', '--params', '{"name":"test"}', '--url', url], env);
  assert.equal(call.code, 0, call.stderr);
  assert.equal(call.stdout.trim(), 'Hi, test!');
});
`;
}

function readme(name: string, category: string, directory: string): string {
  return `# ${name}

A [capnode](https://github.com/capnode/capnode) plugin: it adds the command \`${category}.hello\`.

## Develop

\`\`\`sh
npm install                       # links @capnode/capabilities from your capnode (definePlugin, z): no registry needed
capnode serve --dev-plugin ${join(directory, 'index.js')}   # reloads on every save; MCP clients see tools/list_changed
npm test                          # starts a real capnode host with this plugin and calls its command over MCP
\`\`\`

The test runs the \`capnode\` that made this project, or the one \`CAPNODE_BIN\` names (the path of its \`bin.js\`), else the one on your PATH.
\`@capnode/capabilities\` is a \`file:\` link to that capnode's copy (see package.json): after an upgrade that moves
capnode elsewhere, point it at the new copy (\`capnode plugins new\` prints where it is) and run \`npm install\` again.

## Install

\`\`\`sh
capnode plugins add ${directory}    # a running host loads it at once; or, once published: capnode plugins add ${name}
capnode status                    # shows whether it loaded, or why not
capnode plugins remove ${name}    # unloads it from the running host
\`\`\`

Its settings section is \`pluginSettings["${name}"]\` in capnode's settings.json (here: \`greeting\`).
`;
}

/**
 * Where this capnode's own `@capnode/capabilities` is (its real folder): the scaffold links it with
 * `file:`, so `npm install` needs no registry and the plugin builds against the API its host runs.
 */
function installedCapabilities(): string | undefined {
  try {
    return dirname(realpathSync(createRequire(import.meta.url).resolve('@capnode/capabilities/package.json')));
  } catch {
    return undefined;
  }
}

/** The bin.js of the capnode running now (for the scaffold's test), when it is one. */
function runningBin(): string | undefined {
  const script = process.argv[1];
  if (!script) return undefined;
  try {
    const real = realpathSync(script);
    return /bin\.js$/.test(real) ? real : undefined;
  } catch {
    return undefined;
  }
}

/** Writes a project file with mode 0644 (the umask may only have taken bits away from it). */
function write(path: string, text: string): void {
  writeFileSync(path, text, { mode: 0o644 });
  chmodSync(path, 0o644);
}

/** `capnode plugins new <name>`: a plugin project in ./<name> (package.json, index.js, README, a test through a real host). */
export function createPluginProject(context: Context, name: string): number {
  if (!PACKAGE_NAME.test(name)) throw new CliError('usage', `'${name}' is not a valid package name (lower case letters, digits, - . _ ~, optionally @scope/)`);
  const base = name.split('/').pop()!;
  const category = base.replace(/^capnode-(?:plugin-)?/, '').replace(/[^a-z0-9_-]/g, '_') || 'plugin';
  const directory = resolve(process.cwd(), base);
  if (existsSync(directory)) throw new CliError('failure', `${directory} already exists; pick another name or remove it`);
  // 0755/0644 whatever the umask: the host refuses plugin files that group or others can write.
  mkdirSync(join(directory, 'test'), { recursive: true, mode: 0o755 });
  chmodSync(directory, 0o755);
  chmodSync(join(directory, 'test'), 0o755);
  const capabilities = installedCapabilities();
  const manifest = {
    name,
    version: '0.1.0',
    description: `capnode plugin: ${category}.* commands`,
    type: 'module',
    main: './index.js',
    exports: './index.js',
    files: ['index.js', 'README.md'],
    keywords: ['capnode', 'capnode-plugin'],
    scripts: { test: 'node --test test/' },
    peerDependencies: { '@capnode/capabilities': `>=${version().replace(/-.*$/, '')}` },
    ...(capabilities === undefined ? {} : { devDependencies: { '@capnode/capabilities': `file:${capabilities}` } }),
    engines: { node: '>=20' },
  };
  write(join(directory, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  write(join(directory, 'index.js'), indexJs(category));
  write(join(directory, 'test', 'plugin.test.js'), testJs(name, category, runningBin()));
  write(join(directory, 'README.md'), readme(name, category, directory));
  write(join(directory, '.gitignore'), 'node_modules/\n');
  context.out(`created ${directory}: a plugin with the command ${category}.hello`);
  if (capabilities === undefined) context.err('capnode: cannot tell where this capnode\'s @capnode/capabilities is; npm install will look for it on the registry');
  else context.out(`@capnode/capabilities: file:${capabilities} (this capnode's copy; npm install needs no registry)`);
  context.out(`next: cd ${directory} && npm install && npm test   (develop: capnode serve --dev-plugin ${join(directory, 'index.js')})`);
  return 0;
}
