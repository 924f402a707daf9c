//! The `toolhost` binary. Everything lives in `host/server`; this file only
//! exists so the end-to-end tests in `tests/` can run the real binary.

fn main() -> std::process::ExitCode {
    toolhost_server::main()
}
