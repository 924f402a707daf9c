//! AFL's harness of `toolhost_fuzz_targets::resolver_query`.

fn main() {
    afl::fuzz!(|data: &[u8]| toolhost_fuzz_targets::resolver_query(data));
}
