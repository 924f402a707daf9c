//! AFL's harness of `toolhost_fuzz_targets::backend_path`.

fn main() {
    afl::fuzz!(|data: &[u8]| toolhost_fuzz_targets::backend_path(data));
}
