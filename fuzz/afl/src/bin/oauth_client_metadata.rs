//! AFL's harness of `toolhost_fuzz_targets::oauth_client_metadata`.

fn main() {
    afl::fuzz!(|data: &[u8]| toolhost_fuzz_targets::oauth_client_metadata(data));
}
