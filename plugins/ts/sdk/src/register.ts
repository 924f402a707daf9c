// `node --import @toolhost/sdk/register`: outside a component there is no
// host, so every `toolhost:plugin/*` import is resolved to the fakes in
// testing/host-stub.ts (driven through `fakeHost` of `@toolhost/sdk/testing`).
// Needs Node >= 22.15 (`module.registerHooks`) and type stripping (22.18).

import { registerHooks } from "node:module";

// The stub beside this module: host-stub.ts when this runs from the sources
// (the SDK's own tests), host-stub.js from the package's dist/.
const extension = import.meta.url.endsWith(".ts") ? "ts" : "js";
const stub = new URL(`./testing/host-stub.${extension}`, import.meta.url).href;

registerHooks({
  resolve(specifier, context, next) {
    if (specifier.startsWith("toolhost:plugin/")) return { url: stub, shortCircuit: true };
    return next(specifier, context);
  },
});
