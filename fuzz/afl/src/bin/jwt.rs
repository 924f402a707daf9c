//! AFL's harness of `toolhost_fuzz_targets::jwt`.

fn main() {
    afl::fuzz!(|data: &[u8]| toolhost_fuzz_targets::jwt(data));
}
