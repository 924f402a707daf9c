//! AFL's harness of `toolhost_fuzz_targets::scopes_pkce`.

fn main() {
    afl::fuzz!(|data: &[u8]| toolhost_fuzz_targets::scopes_pkce(data));
}
