//! AFL's harness of `toolhost_fuzz_targets::signed_envelope`.

fn main() {
    afl::fuzz!(|data: &[u8]| toolhost_fuzz_targets::signed_envelope(data));
}
