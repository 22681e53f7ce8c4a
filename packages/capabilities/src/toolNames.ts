/**
 * How a connection spells command names: `dotted` as registered (`system.run`), or `underscore` with
 * every `.` as `_` (`system_run`), the spelling OpenAI-style function names accept
 * ({@link PORTABLE_TOOL_NAME}). Calls accept both spellings on every connection; audit, approvals and
 * the dashboard always show the registered (dotted) name.
 */
export type ToolNameStyle = 'dotted' | 'underscore';

/** Every {@link ToolNameStyle}, the default first. */
export const TOOL_NAME_STYLES: readonly ToolNameStyle[] = ['dotted', 'underscore'];

/** What OpenAI-style harnesses accept as a function (tool) name. */
export const PORTABLE_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** True when `value` is a {@link ToolNameStyle}. */
export function isToolNameStyle(value: unknown): value is ToolNameStyle {
  return value === 'dotted' || value === 'underscore';
}

/** `name` with every `.` as `_` (`system.run` → `system_run`). */
export function underscoreToolName(name: string): string {
  return name.replaceAll('.', '_');
}

/** `name` (a registered command name) as a connection of `style` spells it. */
export function toolNameIn(name: string, style: ToolNameStyle): string {
  return style === 'underscore' ? underscoreToolName(name) : name;
}
