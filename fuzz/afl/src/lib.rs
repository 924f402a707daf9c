//! Nothing here: each target is a binary in `src/bin/`.
