//! AFL's harness of `toolhost_fuzz_targets::secret_scanner`.

fn main() {
    afl::fuzz!(|data: &[u8]| toolhost_fuzz_targets::secret_scanner(data));
}
