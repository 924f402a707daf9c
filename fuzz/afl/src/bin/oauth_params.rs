//! AFL's harness of `toolhost_fuzz_targets::oauth_params`.

fn main() {
    afl::fuzz!(|data: &[u8]| toolhost_fuzz_targets::oauth_params(data));
}
