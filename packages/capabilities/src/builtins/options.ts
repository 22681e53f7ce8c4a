/** Options shared by the built-in capabilities; the defaults fit a host process. */
export interface BuiltinOptions {
  /**
   * The environment the built-ins see: its PATH finds programs, and `system.run` children inherit
   * its minimal base set (PATH, HOME, USER, LANG, TERM, TZ, …; nothing else). Default `process.env`
   * (read at call time).
   */
  readonly env?: NodeJS.ProcessEnv;
  /**
   * Working directory of `system.run` when the call gives none, and base of relative ones. Default:
   * the user's home directory (never the host's own cwd). Give the exec approval hook the same value
   * (`createNodeExecResolvers({ defaultCwd })`).
   */
  readonly defaultCwd?: string;
}
