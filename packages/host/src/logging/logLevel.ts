import type { LogLevel } from '@capnode/toolkit';
/** Severity of a host log line (`debug` only with `CAPNODE_DEBUG` set, by default). */
export type HostLogLevel = LogLevel;
