[package]
name = "{{crate}}"
description = "{{description}}"
version = "0.1.0"
edition = "2024"
rust-version = "1.95"
publish = false

# A tool plugin is a component: a cdylib built for wasm32-wasip2.
[lib]
crate-type = ["cdylib"]

[dependencies]
toolhost-sdk = {{rust_sdk}}
schemars = "1"
serde = { version = "1", features = ["derive"] }

[dev-dependencies]
serde_json = "1"

# Small, self-contained components: a panic aborts (a trap the host sees).
[profile.release]
opt-level = "s"
lto = true
codegen-units = 1
panic = "abort"
strip = true

# Its own workspace, whatever directory it is in.
[workspace]
