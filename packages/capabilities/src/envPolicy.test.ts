import { expect, test } from 'vitest';
import { isCodeLoadingEnvKey, isRefusedEnvKey, isSecretEnvKey, maskEnvForDisplay } from './envPolicy.js';

test('isRefusedEnvKey covers runtime hijacking keys case-insensitively', () => {
  for (const key of ['NODE_OPTIONS', 'node_options', 'LD_PRELOAD', 'LD_LIBRARY_PATH', 'DYLD_INSERT_LIBRARIES', 'BASH_ENV', 'PYTHONSTARTUP', 'JAVA_TOOL_OPTIONS']) {
    expect(isRefusedEnvKey(key)).toBe(true);
  }
  for (const key of ['PATH', 'HOME', 'GITHUB_TOKEN', 'NODE_ENV', 'OLD_PRELOAD']) expect(isRefusedEnvKey(key)).toBe(false);
});

test('isCodeLoadingEnvKey covers every variable that makes a child run code its argv does not show', () => {
  const keys = [
    'GIT_CONFIG_COUNT', 'GIT_CONFIG_KEY_0', 'GIT_EXTERNAL_DIFF', 'GIT_PAGER', 'GIT_SSH_COMMAND', 'git_dir', 'BASH_FUNC_ls%%', 'PATH', 'Path',
    'LD_PRELOAD', 'LD_AUDIT', 'DYLD_INSERT_LIBRARIES', 'NODE_OPTIONS', 'NODE_PATH', 'NODE_ENV', 'PYTHONPATH', 'PYTHONSTARTUP', 'PERL5OPT', 'PERL5LIB',
    'PERLLIB', 'RUBYOPT', 'RUBYLIB', 'JAVA_TOOL_OPTIONS', '_JAVA_OPTIONS', 'BASH_ENV', 'ENV', 'PROMPT_COMMAND', 'PS4', 'GCONV_PATH', 'HOME',
    'XDG_CONFIG_HOME', 'PAGER', 'EDITOR', 'LESSOPEN', 'NPM_CONFIG_SCRIPT_SHELL', 'npm_config_node_options', 'OPENSSL_CONF', 'MAKEFLAGS', 'CC',
    'RUSTC_WRAPPER', 'GOFLAGS', 'DOTNET_STARTUP_HOOKS', 'COMSPEC', 'PATHEXT', 'SHELL', 'ZDOTDIR', 'LUA_INIT',
  ];
  for (const key of keys) expect(isCodeLoadingEnvKey(key), key).toBe(true);
  for (const key of ['COLOR', 'CI', 'LANG', 'TZ', 'GITHUB_TOKEN', 'MY_FLAG', 'TERM', 'GOOGLE_CLOUD_PROJECT']) expect(isCodeLoadingEnvKey(key), key).toBe(false);
});

test('maskEnvForDisplay masks secret-looking values and shows every key and every code-loading value', () => {
  for (const key of ['GITHUB_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'DB_PASSWORD', 'API_KEY', 'AUTH_HEADER', 'MY_CREDENTIALS', 'COOKIE', 'SESSION_ID']) {
    expect(isSecretEnvKey(key), key).toBe(true);
  }
  expect(isSecretEnvKey('COLOR')).toBe(false);
  expect(maskEnvForDisplay({ GITHUB_TOKEN: 'ghp_123', COLOR: 'never', GIT_CONFIG_KEY_0: 'core.pager' })).toEqual({
    GITHUB_TOKEN: '[masked, 7 characters]',
    COLOR: 'never',
    GIT_CONFIG_KEY_0: 'core.pager',
  });
});

test('editor init commands, pass extensions, rustup toolchains, pip/uv and AWS config files are code-loading, and their values are shown even when the name looks secret', () => {
  for (const key of ['VIMINIT', 'EXINIT', 'GVIMINIT', 'MYVIMRC', 'INPUTRC', 'PASSWORD_STORE_EXTENSIONS_DIR', 'PASSWORD_STORE_ENABLE_EXTENSIONS', 'RUSTUP_TOOLCHAIN', 'RUSTUP_HOME', 'PIP_INDEX_URL', 'UV_INDEX_URL', 'LUA_INIT', 'TAR_OPTIONS', 'SYSTEMD_PAGER', 'AWS_CONFIG_FILE', 'AWS_SHARED_CREDENTIALS_FILE']) {
    expect(isCodeLoadingEnvKey(key), key).toBe(true);
  }
  expect(maskEnvForDisplay({ PASSWORD_STORE_EXTENSIONS_DIR: '/tmp/evil', AWS_SHARED_CREDENTIALS_FILE: '/tmp/creds' })).toEqual({ PASSWORD_STORE_EXTENSIONS_DIR: '/tmp/evil', AWS_SHARED_CREDENTIALS_FILE: '/tmp/creds' });
});
