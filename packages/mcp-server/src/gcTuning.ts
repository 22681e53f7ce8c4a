import { setFlagsFromString } from 'node:v8';

/**
 * Keeps V8's young generation at its initial size for the rest of the process, so the young
 * collections that run under request load stay short.
 *
 * V8 grows the young generation while much of it survives collection, and on Node 20 every MCP
 * request leaves some survivors behind (the MCP SDK creates an AbortSignal per request, and Node 20's
 * AbortSignals outlive young collections). The young generation then grows to 16 MB per semi-space
 * and each collection copies megabytes: measured on a 2-core VM, 4–6 ms pauses every ~40 ms and a
 * p99 over 6 ms at 8 connections, against 0.2 ms pauses and a p99 under 3 ms with growth off, at
 * equal or better throughput.
 *
 * Process-wide: call it once, early, in a process you own that serves requests (`capnode serve`
 * does). A library embedding capnode should leave the choice to its application.
 */
export function limitYoungGenerationGrowth(): void {
  setFlagsFromString('--semi-space-growth-factor=1');
}
