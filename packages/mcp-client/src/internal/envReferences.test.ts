import { expect, test } from 'vitest';
import { expandEnvReferences } from './envReferences.js';

const env: Record<string, string> = { A: 'alpha', B: 'b${x}' };
const resolve = ({ name, fallback }: { name?: string; fallback?: string }) => (name !== undefined ? (env[name] ?? fallback) : undefined);

test('server config mode: ${NAME}, ${env:NAME}, ${NAME:-default}, $${ escape, stray ${ reported', () => {
  const malformed: number[] = [];
  const expand = (value: string) => expandEnvReferences(value, { escape: true, resolve, onMalformed: (at) => malformed.push(at) });
  expect(expand('x ${A} ${env:A} ${C:-dflt} $${A} $A')).toBe('x alpha alpha dflt ${A} $A');
  expect(expand('${B}')).toBe('b${x}');
  expect(expand('no references')).toBe('no references');
  expect(expand('${ oops ${A')).toBe('${ oops ${A');
  expect(malformed).toEqual([0, 8]);
  expect(expand('${UNSET}')).toBe('${UNSET}');
});

test('import mode: editor placeholders, no escape', () => {
  const seen: string[] = [];
  const out = expandEnvReferences('${userHome}/x $${A} ${workspaceFolder}', {
    escape: false,
    resolve: ({ special, name, whole }) => {
      seen.push(special ?? name ?? whole);
      return special === 'userHome' ? '/home/me' : name ? env[name] : undefined;
    },
  });
  expect(out).toBe('/home/me/x $alpha ${workspaceFolder}');
  expect(seen).toEqual(['userHome', 'A', 'workspaceFolder']);
});
