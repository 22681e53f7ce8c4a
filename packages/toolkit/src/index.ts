export type { AbortSignalLike, DeadlineOptions, DeadlineTimer, Deadline, DelayOptions } from './deadline.js';
export { armDeadline, createDeadline, waitFor, delay, isTimeoutError, MAX_TIMER_MS } from './deadline.js';
export type { ErrorClassOptions, CodedError, CodedErrorClass, BrandedErrorClass } from './errorClass.js';
export { defineErrorClass, defineBrandedErrorClass, errorBrandOf, hasErrorBrand } from './errorClass.js';
export { isLoopbackAddress, isLoopbackHost, isLoopbackHostHeader } from './loopback.js';
export type { LogLevel } from './values.js';
export { isPlainObject } from './values.js';
export { SlotMap } from './slotMap.js';
