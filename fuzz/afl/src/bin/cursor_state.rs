//! AFL's harness of `toolhost_fuzz_targets::cursor_state`.

fn main() {
    afl::fuzz!(|data: &[u8]| toolhost_fuzz_targets::cursor_state(data));
}
