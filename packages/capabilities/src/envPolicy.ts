/**
 * Variables that make a program load code it was not asked to run (preload a library, inject
 * interpreter options or startup scripts) rather than configure it.
 */
const REFUSED_ENV_KEYS = new Set([
  'NODE_OPTIONS',
  'NODE_REPL_EXTERNAL_MODULE',
  'NODE_EXTRA_CA_CERTS',
  'BASH_ENV',
  'ENV',
  'PROMPT_COMMAND',
  'PYTHONSTARTUP',
  'PYTHONINSPECT',
  'PERL5OPT',
  'PERL5DB',
  'RUBYOPT',
  'JAVA_TOOL_OPTIONS',
  '_JAVA_OPTIONS',
  'JDK_JAVA_OPTIONS',
  'DOTNET_STARTUP_HOOKS',
  'GIT_SSH_COMMAND',
]);
const REFUSED_ENV_PREFIXES = ['LD_', 'DYLD_'];

/**
 * True for environment keys a caller or a config entry may never set for a child process:
 * NODE_OPTIONS, LD_*, DYLD_* and the like. Compared case-insensitively, as Windows does.
 * `system.run` and the MCP client's stdio servers share this one rule.
 */
export function isRefusedEnvKey(key: string): boolean {
  const upper = key.toUpperCase();
  return REFUSED_ENV_KEYS.has(upper) || REFUSED_ENV_PREFIXES.some((prefix) => upper.startsWith(prefix));
}
