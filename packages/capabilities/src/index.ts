export type { CapabilityErrorCode } from './errors.js';
export { CapabilityError, isCapabilityError } from './errors.js';
export type { Content, CommandSuccess, CommandFailure, CommandResult, CommandOutput } from './content.js';
export { text, json, image, audio, resource, fail, toCommandResult } from './content.js';
export type {
  CommandAnnotations,
  ProgressUpdate,
  LogLevel,
  Transport,
  InvocationRequest,
  CommandContext,
  CommandDefinition,
  Capability,
} from './contract.js';
export { defineCommand, defineCapability } from './contract.js';
export type { InputJsonSchema, RegisteredCommand, RegistryChange, CommandFilter, Registry } from './registry.js';
export { createRegistry, toInputJsonSchema } from './registry.js';
export type { Invocation, InvocationOutcome, InvocationHook, InvokeOptions, InvokerOptions, Invoker } from './pipeline.js';
export { createInvoker } from './pipeline.js';
