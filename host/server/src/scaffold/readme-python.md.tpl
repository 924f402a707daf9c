# {{name}}

{{description}} A toolhost tool plugin, written in Python with `toolhost_sdk`
(the toolhost book's Python author's guide has the whole SDK).

```sh
./build.sh                                                # its tests, then {{component}}
toolhost plugin pin toolhost.toml --component {{component}} --out catalog --cache-dir cache
toolhost call --plugins catalog --cache-dir cache greet '{"name": "Ada"}'
toolhost dev .                                            # serve it, reloading on change
```

Add a tool: write a typed function with `@tool` in `app.py`, and declare it
in `toolhost.toml` with its permission. The host refuses a component that
describes a tool its manifest does not declare.
