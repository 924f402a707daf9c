//! AFL's harness of `toolhost_fuzz_targets::dpop_proof`.

fn main() {
    afl::fuzz!(|data: &[u8]| toolhost_fuzz_targets::dpop_proof(data));
}
