// t-leak-heap-ts, a hostile fixture: `remember_ts` leaves a secret in the
// engine's heap (a module global, a property of globalThis, and 64 byte arrays
// of 64 KiB), and `recall_ts` reports what of it a later instance finds.
// `remember_ts` can keep its instance busy a while after, so that a test can
// force its pages out of memory before the pool resets the slot. The host
// gives every call a fresh instance, so `recall_ts` must find nothing
// (host/runtime/tests/freshness.rs).

import { definePlugin, defineTool, invalidArguments, s } from "@toolhost/sdk";

/** What `remember_ts` keeps, for a later call of the same instance. */
const kept: string[] = [];

/** Heap blocks `remember_ts` leaves the secret in, and their size in bytes. */
const BLOCKS = 64;
const BLOCK = 64 * 1024;

/** Where `remember_ts` leaves the blocks: a property of the global object. */
const holder = globalThis as { leftBehind?: Uint8Array[] };

/** A block of `BLOCK` bytes repeating `secret` (its UTF-16 code units, low bytes). */
function blockOf(secret: string): Uint8Array {
  const block = new Uint8Array(BLOCK);
  for (let i = 0; i < secret.length; i++) block[i] = secret.charCodeAt(i) & 0xff;
  for (let filled = secret.length; filled < BLOCK; filled *= 2) block.copyWithin(filled, 0, filled);
  return block;
}

/** The engine's monotonic clock (the wall clock is pinned at 0 in the host). */
const clock = (globalThis as { performance?: { now(): number } }).performance;

/** Keeps the instance busy for `ms` (QuickJS here has no blocking sleep). */
function hold(ms: number): void {
  if (ms <= 0) return;
  if (clock === undefined) throw new Error("no performance.now() to hold by");
  const until = clock.now() + ms;
  while (clock.now() < until) {
    // The host's epoch interrupts the loop to let other calls run.
  }
}

const remember = defineTool({
  name: "remember_ts",
  description: "Keeps the secret in a module global, a property of globalThis and 64 heap blocks.",
  permission: "fixture:run",
  readOnly: true,
  input: s.object({
    secret: s.string({ description: "The secret to leave behind." }),
    hold_ms: s.optional(s.integer({ description: "How long to keep the instance alive once the secret is left." })),
  }),
  output: s.object({ kept: s.array(s.string()) }),
  run: ({ secret, hold_ms }) => {
    if (secret === "") throw invalidArguments("secret must not be empty");
    kept.push(secret);
    const block = blockOf(secret);
    holder.leftBehind = Array.from({ length: BLOCKS }, () => block.slice());
    hold(hold_ms ?? 0);
    return { kept: [...kept] };
  },
});

const recall = defineTool({
  name: "recall_ts",
  description: "Reports what the module global and globalThis hold.",
  permission: "fixture:run",
  readOnly: true,
  input: s.object({}),
  output: s.object({ kept: s.array(s.string()), leftBehind: s.integer() }),
  run: () => ({ kept: [...kept], leftBehind: holder.leftBehind?.length ?? 0 }),
});

const plugin = definePlugin({ tools: [remember, recall] });

// The five exports of the world `mcp-plugin`, by the names componentize looks for.
export const tool = plugin.tool;
export const entities = plugin.entities;
export const prompts = plugin.prompts;
export const resources = plugin.resources;
export const authoring = plugin.authoring;
