/**
 * Variables that make a program load code it was not asked to run (preload a library, inject
 * interpreter options or startup scripts) rather than configure it. The MCP client's stdio servers
 * refuse these outright ({@link isRefusedEnvKey}).
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
 * True for environment keys a config entry may never set for an MCP stdio server: NODE_OPTIONS,
 * LD_*, DYLD_* and the like. Compared case-insensitively, as Windows does. `system.run` applies the
 * wider {@link isCodeLoadingEnvKey} through the exec policy instead.
 */
export function isRefusedEnvKey(key: string): boolean {
  const upper = key.toUpperCase();
  return REFUSED_ENV_KEYS.has(upper) || REFUSED_ENV_PREFIXES.some((prefix) => upper.startsWith(prefix));
}

/**
 * Variables through which a child runs code, or reads configuration that runs code, that its argv
 * does not show. Grouped by how they do it; a deny-list, so the exec policy also treats every other
 * caller-set variable as something the user must have seen (see `evaluateExecPolicy`).
 */
const CODE_LOADING_KEYS = new Set([
  // Program lookup and shells.
  'PATH', 'PATHEXT', 'COMSPEC', 'SHELL', 'BASH_ENV', 'ENV', 'PROMPT_COMMAND', 'PS1', 'PS2', 'PS4', 'SHELLOPTS', 'BASHOPTS', 'IFS', 'ZDOTDIR', 'PSMODULEPATH',
  // Where per-user configuration (.gitconfig, .npmrc, .bashrc, …) is read from.
  'HOME', 'USERPROFILE', 'APPDATA', 'LOCALAPPDATA', 'XDG_CONFIG_HOME', 'XDG_CONFIG_DIRS', 'XDG_DATA_HOME', 'XDG_DATA_DIRS', 'CURL_HOME', 'WGETRC', 'GNUPGHOME',
  // Dynamic loader and C library.
  'LIBPATH', 'SHLIB_PATH', 'GCONV_PATH', 'LOCPATH', 'NLSPATH', 'HOSTALIASES', 'RESOLV_HOST_CONF', 'TERMINFO', 'TERMINFO_DIRS',
  'OPENSSL_CONF', 'OPENSSL_ENGINES', 'OPENSSL_MODULES', 'SASL_PATH',
  'QT_PLUGIN_PATH', 'QT_QPA_PLATFORM_PLUGIN_PATH', 'GTK_MODULES', 'GTK_PATH', 'GIO_MODULE_DIR', 'GIO_EXTRA_MODULES', 'GST_PLUGIN_PATH', 'GST_PLUGIN_SYSTEM_PATH',
  // Helper programs other programs start.
  'PAGER', 'MANPAGER', 'EDITOR', 'VISUAL', 'BROWSER', 'LESSOPEN', 'LESSCLOSE', 'SSH_ASKPASS', 'SUDO_ASKPASS',
  // Interpreters and runtimes.
  'JAVA_TOOL_OPTIONS', '_JAVA_OPTIONS', 'JDK_JAVA_OPTIONS', 'CLASSPATH', 'JAVA_HOME',
  'PHPRC', 'PHP_INI_SCAN_DIR', 'TCLLIBPATH', 'R_PROFILE', 'R_PROFILE_USER', 'R_ENVIRON', 'R_ENVIRON_USER', 'R_LIBS', 'R_LIBS_USER', 'ELECTRON_RUN_AS_NODE',
  // Editors, readline, archivers and helpers that run commands from their configuration.
  'VIMINIT', 'GVIMINIT', 'EXINIT', 'MYVIMRC', 'MYGVIMRC', 'INPUTRC', 'TAR_OPTIONS', 'SYSTEMD_PAGER', 'SYSTEMD_EDITOR', 'AWS_CONFIG_FILE', 'AWS_SHARED_CREDENTIALS_FILE',
  // Build tools.
  'MAKEFLAGS', 'MFLAGS', 'MAKEFILES', 'CC', 'CXX', 'CPP', 'LD', 'AR', 'AS', 'CFLAGS', 'CXXFLAGS', 'CPPFLAGS', 'LDFLAGS',
  'RUSTC', 'RUSTC_WRAPPER', 'RUSTC_WORKSPACE_WRAPPER', 'RUSTFLAGS', 'RUSTDOCFLAGS',
  'GOFLAGS', 'GOROOT', 'GOPATH', 'GOENV', 'GOTOOLCHAIN', 'GOPROXY', 'GOSUMDB', 'GONOSUMDB', 'GONOSUMCHECK', 'GOINSECURE', 'GOEXPERIMENT',
]);
const CODE_LOADING_PREFIXES = [
  'GIT_', 'BASH_FUNC_', 'LD_', 'DYLD_', 'NODE_', 'NPM_CONFIG_', 'YARN_', 'COREPACK_', 'DENO_', 'BUN_',
  'PYTHON', 'PERL', 'RUBY', 'GEM_', 'BUNDLE_', 'LUA_', 'DOTNET_', 'COMPLUS_', 'CORECLR_', 'CARGO_', 'CGO_', 'RUSTUP_', 'PIP_', 'UV_', 'POETRY_',
  'PASSWORD_STORE_',
];

/**
 * True for environment variables that can make a child run code its argv does not show: PATH,
 * GIT_*, BASH_FUNC_*, LD_*, DYLD_*, NODE_*, PYTHON*, PERL*, RUBY*, JAVA_TOOL_OPTIONS, BASH_ENV,
 * ENV, PROMPT_COMMAND, GCONV_PATH, HOME and XDG_CONFIG_HOME (where configuration is read), PAGER,
 * EDITOR, compiler variables and the like. Case-insensitive. The exec policy never lets one through
 * unless the user approved that exact value.
 */
export function isCodeLoadingEnvKey(key: string): boolean {
  const upper = key.toUpperCase();
  return CODE_LOADING_KEYS.has(upper) || CODE_LOADING_PREFIXES.some((prefix) => upper.startsWith(prefix)) || isRefusedEnvKey(upper);
}

const SECRET_KEY = /TOKEN|SECRET|PASSW(?:OR)?D|PASSPHRASE|(?:^|_)PASS(?:$|_)|KEY|AUTH|CREDENTIAL|COOKIE|SESSION|PRIVATE|SIGNATURE/i;

/** True for variable names that look like they hold a secret (`*TOKEN*`, `*SECRET*`, `*KEY*`, `COOKIE`, …). */
export function isSecretEnvKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

/**
 * The variables as an approval prompt shows them: every key, values of {@link isSecretEnvKey}
 * keys replaced by `[masked, N characters]` — except code-loading keys ({@link isCodeLoadingEnvKey},
 * e.g. `GIT_CONFIG_KEY_0`, `NODE_AUTH_TOKEN`), whose value is the code the user approves and is always shown.
 */
export function maskEnvForDisplay(env: Readonly<Record<string, string>>): Record<string, string> {
  const mask = (key: string) => isSecretEnvKey(key) && !isCodeLoadingEnvKey(key);
  return Object.fromEntries(Object.entries(env).map(([key, value]) => [key, mask(key) ? `[masked, ${value.length} characters]` : value]));
}
