// The little of Node that register.ts uses, declared for the SDK's own type
// check and build: @types/node is not a dependency. A .d.ts is not emitted,
// so nothing of this reaches a consumer (whose register.d.ts is empty).

declare module "node:module" {
  interface ResolveContext {
    conditions: string[];
    importAttributes: Record<string, string>;
    parentURL?: string;
  }
  interface ResolveResult {
    url: string;
    format?: string | null;
    shortCircuit?: boolean;
  }
  type NextResolve = (specifier: string, context?: ResolveContext) => ResolveResult;
  export function registerHooks(hooks: {
    resolve?: (specifier: string, context: ResolveContext, next: NextResolve) => ResolveResult;
  }): { deregister(): void };
}

interface ImportMeta {
  readonly url: string;
}

declare class URL {
  constructor(url: string, base?: string);
  readonly href: string;
}
