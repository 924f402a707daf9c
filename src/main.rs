//! The `toolhost` binary. Everything lives in `host/server`; this file only
//! exists so the end-to-end tests in `tests/` can run the real binary.

/// mimalloc rather than glibc's malloc: a call allocates and frees many
/// small blocks across tokio's worker threads, where glibc's arenas spent
/// about a seventh of the server's CPU (BENCHMARKS part 22).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    toolhost_server::main()
}
