// `node --import @toolhost/sdk/register`: outside a component there is no
// host, so every `toolhost:plugin/*` import is resolved to the fakes in
// testing/host-stub.ts (driven through `fakeHost` of `@toolhost/sdk/testing`).
// Needs Node >= 22.15 (`module.registerHooks`) and type stripping (22.18).

import { registerHooks } from "node:module";

const stub = new URL("./testing/host-stub.ts", import.meta.url).href;

registerHooks({
  resolve(specifier, context, next) {
    if (specifier.startsWith("toolhost:plugin/")) return { url: stub, shortCircuit: true };
    return next(specifier, context);
  },
});
