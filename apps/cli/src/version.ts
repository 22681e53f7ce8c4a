/** Inlined by tsup (`define`) from package.json, so printing the version reads no file. */
declare const __CAPNODE_VERSION__: string;

/** The CLI's version. */
export function version(): string {
  return __CAPNODE_VERSION__;
}
