// Human checkpoints, through the host's `checkpoint` import. A run that
// needs a person's judgement opens one; a person decides it from any MCP
// client; the tool reads the decision by opening it again on a later call.
// The host owns the rows (one per tenant, plugin and subject) and refuses
// opening while a plan runs and after a clarification: a tool that opens
// checkpoints is a mutating one.

import { failed } from "./errors.ts";
import * as host from "./host.ts";
import { encode } from "./utf8.ts";

/** The longest title the host accepts, in bytes: one line for a person. */
export const MAX_TITLE_BYTES = 300;
/** The longest evidence the host accepts, in bytes: a paragraph or two. */
export const MAX_EVIDENCE_BYTES = 4096;

/** A checkpoint as the host holds it. */
export interface CheckpointInfo {
  /** `chk_…`: what a person names in `decide_checkpoint`. */
  id: string;
  /** Bumped by every change (1 when opened). */
  version: number;
  /** `waiting` or `decided`. */
  state: string;
  /** `confirm`, `false_positive` or `inconclusive`, once decided. */
  disposition?: string;
  /** `passed` or `inconclusive` once decided: what to carry to the backend. */
  outcome?: string;
}

/**
 * Opens the checkpoint of `subject` (`execution:ex-3`), or answers the one
 * already open for it. `title` and `evidence` are cut to the host's bounds
 * at a character boundary, ending in `…`. A refusal throws `failed` with
 * the host's reason.
 */
export function open(subject: string, title: string, evidence: string): CheckpointInfo {
  const a = host.open(subject, fit(title, MAX_TITLE_BYTES), fit(evidence, MAX_EVIDENCE_BYTES));
  if (!a.ok) throw failed(`checkpoint "${subject}" could not be opened: ${a.error}`);
  return a.value;
}

/** `text` if it fits in `max` UTF-8 bytes, else its longest prefix that fits with `…`. */
export function fit(text: string, max: number): string {
  if (encode(text).length <= max) return text;
  let out = "";
  let used = encode("…").length;
  for (const ch of text) {
    used += encode(ch).length;
    if (used > max) break;
    out += ch;
  }
  return `${out}…`;
}

/** The module as one namespace: `checkpoint.open(…)`. */
export const checkpoint = { open };
