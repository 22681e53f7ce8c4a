import { z } from 'zod';
import type { Capability, CommandDefinition } from './contract.js';
import { CapabilityError } from './errors.js';
import { underscoreToolName } from './toolNames.js';

/** JSON Schema for a command's arguments, as MCP `inputSchema` expects (an object schema). */
export type InputJsonSchema = { type: 'object'; [key: string]: unknown };

/** A registered command with everything transports need, computed once at registration. */
export interface RegisteredCommand {
  /** Canonical name as registered. */
  readonly name: string;
  readonly category: string;
  readonly definition: CommandDefinition;
  readonly inputSchema: InputJsonSchema;
}

/** Emitted after the set of commands changed. */
export interface RegistryChange {
  readonly version: number;
  readonly added: readonly string[];
  readonly removed: readonly string[];
}

export interface CommandFilter {
  /** Leave out `localOnly` commands (what a gateway may see). */
  readonly excludeLocalOnly?: boolean;
}

/**
 * The live set of capabilities every transport reads from.
 *
 * Transports read it on every listing, so registering after start is visible on the next
 * `tools/list` with no transport code.
 */
export interface Registry {
  /**
   * Adds a capability; returns a function that removes it again. Throws on a duplicate command name,
   * and when a command's underscore spelling (`.` → `_`) is another command's name or underscore
   * spelling (the error names both), so both spellings always mean one command.
   */
  register(capability: Capability): () => void;
  /** Removes a capability registered earlier; false if it was not registered. */
  unregister(capability: Capability): boolean;
  /**
   * Looks a command up case-insensitively, by its name or its underscore spelling (`system_run` finds
   * `system.run`); the result carries the canonical name.
   */
  resolve(name: string): RegisteredCommand | undefined;
  /** All commands in registration order. */
  commands(filter?: CommandFilter): readonly RegisteredCommand[];
  /** Registered capabilities in registration order. */
  capabilities(): readonly Capability[];
  /** Increases on every change; cheap cache key for derived views. */
  readonly version: number;
  /** Subscribes to changes; returns the unsubscribe function. */
  subscribe(listener: (change: RegistryChange) => void): () => void;
}

const PERMISSIVE_SCHEMA: InputJsonSchema = { type: 'object', additionalProperties: true };

/** Converts a command's zod input to the JSON Schema sent as MCP `inputSchema`. */
export function toInputJsonSchema(input: z.ZodType | undefined): InputJsonSchema {
  if (input === undefined) return PERMISSIVE_SCHEMA;
  const schema = z.toJSONSchema(input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  if (schema.type !== 'object') return { ...PERMISSIVE_SCHEMA };
  return schema as InputJsonSchema;
}

/**
 * Command names starting with this (any case) are the host's own audit records of changes made
 * from the dashboard and admin API (`capnode.settings`, `capnode.token.rotate`): no capability may
 * register one, so no plugin can write a record that passes for such a change.
 */
export const RESERVED_COMMAND_PREFIX = 'capnode.';

/** True for a name in the reserved {@link RESERVED_COMMAND_PREFIX} namespace. */
export function isReservedCommandName(name: string): boolean {
  return name.trim().toLowerCase().startsWith(RESERVED_COMMAND_PREFIX);
}

/** Creates an empty live registry. */
export function createRegistry(initial: readonly Capability[] = []): Registry {
  const byKey = new Map<string, RegisteredCommand>();
  /** Every command by its lower-case underscore spelling. */
  const byUnderscore = new Map<string, RegisteredCommand>();
  const owners = new Map<Capability, RegisteredCommand[]>();
  const listeners = new Set<(change: RegistryChange) => void>();
  let version = 0;
  let ordered: RegisteredCommand[] | undefined;

  const emit = (added: string[], removed: string[]) => {
    version += 1;
    ordered = undefined;
    const change: RegistryChange = { version, added, removed };
    for (const listener of [...listeners]) {
      try {
        listener(change);
      } catch {
        // A listener's fault must not break registration for others.
      }
    }
  };

  const registry: Registry = {
    register(capability) {
      if (owners.has(capability)) throw new CapabilityError('failed', `capability '${capability.category}' is already registered`);
      const entries: RegisteredCommand[] = [];
      const seen = new Map<string, string>();
      const seenUnderscore = new Map<string, string>();
      for (const definition of capability.commands) {
        const key = definition.name.toLowerCase();
        if (!definition.name.trim()) throw new CapabilityError('failed', `capability '${capability.category}' has a command with an empty name`);
        if (isReservedCommandName(definition.name)) throw new CapabilityError('failed', `command '${definition.name}' is in the reserved '${RESERVED_COMMAND_PREFIX}' namespace (the host's own audit records)`);
        if (byKey.has(key) || seen.has(key)) throw new CapabilityError('failed', `command '${definition.name}' is already registered`);
        const underscore = underscoreToolName(definition.name).toLowerCase();
        const clash =
          byUnderscore.get(key)?.name ?? seenUnderscore.get(key) ?? byKey.get(underscore)?.name ?? seen.get(underscore) ?? byUnderscore.get(underscore)?.name ?? seenUnderscore.get(underscore);
        if (clash !== undefined) {
          throw new CapabilityError(
            'failed',
            `command '${definition.name}' collides with command '${clash}': both are '${underscoreToolName(definition.name)}' in underscore spelling (tool names with '.' as '_'); rename one of them`,
          );
        }
        seen.set(key, definition.name);
        seenUnderscore.set(underscore, definition.name);
        const inputSchema = definition.input === undefined && definition.inputSchema ? definition.inputSchema : toInputJsonSchema(definition.input);
        entries.push({ name: definition.name, category: capability.category, definition, inputSchema });
      }
      for (const entry of entries) {
        byKey.set(entry.name.toLowerCase(), entry);
        byUnderscore.set(underscoreToolName(entry.name).toLowerCase(), entry);
      }
      owners.set(capability, entries);
      emit(entries.map((e) => e.name), []);
      return () => {
        registry.unregister(capability);
      };
    },
    unregister(capability) {
      const entries = owners.get(capability);
      if (!entries) return false;
      owners.delete(capability);
      for (const entry of entries) {
        byKey.delete(entry.name.toLowerCase());
        byUnderscore.delete(underscoreToolName(entry.name).toLowerCase());
      }
      emit([], entries.map((e) => e.name));
      return true;
    },
    resolve(name) {
      const key = name.toLowerCase();
      return byKey.get(key) ?? byUnderscore.get(key);
    },
    commands(filter) {
      ordered ??= [...owners.values()].flat();
      return filter?.excludeLocalOnly ? ordered.filter((c) => !c.definition.localOnly) : ordered;
    },
    capabilities() {
      return [...owners.keys()];
    },
    get version() {
      return version;
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
  };
  for (const capability of initial) registry.register(capability);
  return registry;
}
