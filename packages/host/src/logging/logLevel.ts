/** Severity of a host log line (`debug` only with `CAPNODE_DEBUG` set, by default). */
export type HostLogLevel = 'debug' | 'info' | 'warning' | 'error';
