import { expect, test } from 'vitest';
import { isRefusedEnvKey } from './envPolicy.js';

test('isRefusedEnvKey covers runtime hijacking keys case-insensitively', () => {
  for (const key of ['NODE_OPTIONS', 'node_options', 'LD_PRELOAD', 'LD_LIBRARY_PATH', 'DYLD_INSERT_LIBRARIES', 'BASH_ENV', 'PYTHONSTARTUP', 'JAVA_TOOL_OPTIONS']) {
    expect(isRefusedEnvKey(key)).toBe(true);
  }
  for (const key of ['PATH', 'HOME', 'GITHUB_TOKEN', 'NODE_ENV', 'OLD_PRELOAD']) expect(isRefusedEnvKey(key)).toBe(false);
});
