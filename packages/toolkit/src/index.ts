export type { DeadlineOptions, Deadline } from './deadline.js';
export { createDeadline, waitFor, isTimeoutError, MAX_TIMER_MS } from './deadline.js';
export { SlotMap } from './slotMap.js';
