import type { Invocation, InvocationHook } from '@capnode/capabilities';

/** The name of the imported tools' slot in a pipeline's hook order. */
export const MCP_TOOLS_SLOT = 'mcp-tools';

/** Where a slot keeps the hooks bound into it; a registered symbol, so copies of this package agree. */
const BOUND = Symbol.for('capnode.mcpToolsSlot.bound');

type BeforeInvoke = (invocation: Invocation) => void | Promise<void>;

/**
 * The imported tools' place in an invocation pipeline composed before any MCP client runtime exists
 * (a host's): the runtime given that pipeline's invoker binds its risk profile, approver and
 * elicitation forwarding into this slot, so they run where the slot was declared — before the audit
 * hook, which then sees their refusals. Empty (no runtime bound, or a command that is not an
 * imported tool), it passes every call at once.
 */
export interface McpToolsSlot extends InvocationHook {
  readonly name: typeof MCP_TOOLS_SLOT;
  readonly beforeInvoke: BeforeInvoke;
}

interface SlotState {
  bound: readonly BeforeInvoke[];
}

/**
 * Creates an empty {@link McpToolsSlot}; put it in `createInvoker({ hooks })` where imported tools'
 * policy belongs, then pass that invoker to `createMcpRuntime({ invoker })`.
 *
 * @example
 * const invoker = createInvoker({ registry, hooks: [consentHook, createMcpToolsSlot(), auditHook] });
 * await using runtime = await createMcpRuntime(config, { agent: 'assistant', invoker });
 */
export function createMcpToolsSlot(): McpToolsSlot {
  const state: SlotState = { bound: [] };
  const slot: McpToolsSlot = {
    name: MCP_TOOLS_SLOT,
    beforeInvoke(invocation) {
      const { bound } = state;
      // One runtime per pipeline is the usual case: no promise and no loop on the path of every call.
      if (bound.length === 1) return bound[0]!(invocation);
      if (bound.length === 0) return undefined;
      return runAll(bound, invocation);
    },
  };
  Object.defineProperty(slot, BOUND, { value: state });
  return slot;
}

/** Runs every bound hook in binding order; each passes commands that are not its runtime's own. */
async function runAll(bound: readonly BeforeInvoke[], invocation: Invocation): Promise<void> {
  for (const hook of bound) await hook(invocation);
}

/** True for a slot made by {@link createMcpToolsSlot} (in any copy of this package). */
export function isMcpToolsSlot(hook: unknown): hook is McpToolsSlot {
  return typeof hook === 'object' && hook !== null && BOUND in hook;
}

/** The first {@link McpToolsSlot} among a pipeline's hooks. */
export function findMcpToolsSlot(hooks: readonly InvocationHook[]): McpToolsSlot | undefined {
  return hooks.find(isMcpToolsSlot);
}

/** Binds a runtime's policy into `slot`; returns the function that unbinds it (at runtime close). */
export function bindMcpToolsSlot(slot: McpToolsSlot, hook: BeforeInvoke): () => void {
  const state = (slot as unknown as Record<typeof BOUND, SlotState>)[BOUND];
  state.bound = [...state.bound, hook];
  return () => {
    state.bound = state.bound.filter((entry) => entry !== hook);
  };
}
