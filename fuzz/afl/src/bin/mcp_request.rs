//! AFL's harness of `toolhost_fuzz_targets::mcp_request`.

fn main() {
    afl::fuzz!(|data: &[u8]| toolhost_fuzz_targets::mcp_request(data));
}
