// Log lines and progress reports, through the host's `log` and `progress`
// imports. The host tags each line with the plugin and the call and counts
// it against the call's log budget (bytes) and host-call budget: a line
// past either ends the call with a trap. Log for diagnostics, not data.
// A progress report reaches the client only when it asked for progress;
// its message is cut at 1 KiB by the host.

import * as host from "./host.ts";

/** `trace`, `debug`, `info`, `warn` or `error`. */
export type Level = host.Level;

/** Records one line at `level`; `log.info(…)` and friends name the level. */
export const log = Object.assign((level: Level, message: string) => host.log(level, message), {
  trace: (message: string) => host.log("trace", message),
  debug: (message: string) => host.log("debug", message),
  info: (message: string) => host.log("info", message),
  warn: (message: string) => host.log("warn", message),
  error: (message: string) => host.log("error", message),
});

/** How far a long call has come. */
export const progress = {
  /**
   * `done` should increase with each report; `total`, when known, is its
   * value at completion. Non-finite numbers are ignored by the host.
   */
  report(done: number, total?: number, message?: string): void {
    host.report(done, total, message);
  },
};
