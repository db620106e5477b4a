// Layout shared by the main thread and the worker.

/** Slots of the control Int32Array (a SharedArrayBuffer). */
export const CTRL = {
  /** 1 once the main thread has posted a capability reply. */
  REPLY: 0,
  /** Output bytes kept in the output buffer this eval. */
  OUTPUT_LEN: 1,
  /** Bytes of log events in the log buffer this eval. */
  LOG_LEN: 2,
};
export const CTRL_SLOTS = 3;

/** The WIT's log levels, in the order the log buffer numbers them. */
export const LEVELS = ['debug', 'info', 'warn', 'error'];
