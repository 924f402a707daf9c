# {{name}}

{{description}} A toolhost tool plugin, written in Rust with `toolhost-sdk`.

```sh
./build.sh                                                # its test, then {{component}}
toolhost plugin pin toolhost.toml --component {{component}} --out catalog
toolhost call --plugins catalog greet '{"name": "Ada"}'   # one call in the sandbox
toolhost plugin inspect {{component}}
toolhost dev .                                            # serve it, reloading on change
```

Add a tool: write its function in `src/lib.rs`, list it in `tools()`, and
declare it in `toolhost.toml` with its permission. The host refuses a
component that describes a tool its manifest does not declare.
