/** One `${…}` reference found in a value. */
export interface EnvReference {
  /** `userHome` or `workspaceFolder` for the editor placeholders (only with `escape` off). */
  readonly special?: string;
  /** The variable name of `${NAME}`, `${env:NAME}` or `${NAME:-default}`. */
  readonly name?: string;
  /** The text after `:-`, when given. */
  readonly fallback?: string;
  /** The reference as written. */
  readonly whole: string;
}

export interface ExpandOptions {
  /**
   * Server config: `$${` stands for a literal `${` and a `${` that starts no reference is reported.
   * Off for imported editor files, whose tools have no such escape but know `${userHome}` and
   * `${workspaceFolder}`.
   */
  readonly escape: boolean;
  /** Returns the replacement, or `undefined` to keep the reference as written. */
  resolve(reference: EnvReference): string | undefined;
  /** Called for `${` that starts no valid reference (only with `escape` on, where it is an error). */
  onMalformed?(at: number): void;
}

const NAME = '[A-Za-z_][A-Za-z0-9_]*';
const WITH_SPECIALS = new RegExp(`\\$\\{(userHome|workspaceFolder)\\}|\\$\\{(?:env:)?(${NAME})(?::-([^}]*))?\\}`, 'g');
const WITH_ESCAPE = new RegExp(`\\$\\$\\{|\\$\\{(?:env:)?(${NAME})(?::-([^}]*))?\\}|\\$\\{`, 'g');

/**
 * Expands `${NAME}`, `${env:NAME}` and `${NAME:-default}` references in one value: the one
 * implementation behind `servers import` and `${ENV}` in server `env` and `headers` values.
 */
export function expandEnvReferences(value: string, options: ExpandOptions): string {
  if (!value.includes('${')) return value;
  if (options.escape) {
    return value.replace(WITH_ESCAPE, (whole: string, name: string | undefined, fallback: string | undefined, offset: number) => {
      if (whole === '$${') return '${';
      if (name === undefined) {
        options.onMalformed?.(offset);
        return whole;
      }
      return options.resolve({ name, whole, ...(fallback === undefined ? {} : { fallback }) }) ?? whole;
    });
  }
  return value.replace(WITH_SPECIALS, (whole: string, special: string | undefined, name: string | undefined, fallback: string | undefined) => {
    const reference: EnvReference = {
      whole,
      ...(special === undefined ? {} : { special }),
      ...(name === undefined ? {} : { name }),
      ...(fallback === undefined ? {} : { fallback }),
    };
    return options.resolve(reference) ?? whole;
  });
}
