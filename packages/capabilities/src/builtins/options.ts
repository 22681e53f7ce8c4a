/** Options shared by the built-in capabilities; the defaults fit a host process. */
export interface BuiltinOptions {
  /**
   * The environment the built-ins see: its PATH finds programs, and it is the base environment of
   * `system.run` children. Default `process.env` (read at call time).
   */
  readonly env?: NodeJS.ProcessEnv;
  /** Working directory of `system.run` when the call gives none. Default `process.cwd()` at call time. */
  readonly defaultCwd?: string;
}
