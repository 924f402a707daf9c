//! AFL's harness of `toolhost_fuzz_targets::oci_reference`.

fn main() {
    afl::fuzz!(|data: &[u8]| toolhost_fuzz_targets::oci_reference(data));
}
