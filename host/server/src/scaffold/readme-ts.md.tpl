# {{name}}

{{description}} A toolhost tool plugin, written in TypeScript with `@toolhost/sdk`
(the toolhost book's TypeScript author's guide has the whole SDK).

```sh
./build.sh                                                # its tests, then {{component}}
toolhost plugin pin toolhost.toml --component {{component}} --out catalog --cache-dir cache
toolhost call --plugins catalog --cache-dir cache greet '{"name": "Ada"}'
toolhost dev .                                            # serve it, reloading on change
```

Add a tool: write a `defineTool` in `app.ts`, list it in `definePlugin`, and declare it
in `toolhost.toml` with its permission. The host refuses a component that
describes a tool its manifest does not declare.
