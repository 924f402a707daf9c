# {{name}}

{{description}} A toolhost tool plugin, written in Rust with `toolhost-sdk`.

```sh
cargo test                                               # the tool's own test, natively
cargo build --target wasm32-wasip2 --release             # the component
toolhost plugin pin toolhost.toml \
  --component target/wasm32-wasip2/release/{{component}} --out catalog
toolhost call --plugins catalog greet '{"name": "Ada"}'   # one call in the sandbox
toolhost plugin inspect target/wasm32-wasip2/release/{{component}}
```

Add a tool: write its function in `src/lib.rs`, list it in `tools()`, and
declare it in `toolhost.toml` with its permission. The host refuses a
component that describes a tool its manifest does not declare.
