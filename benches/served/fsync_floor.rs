//! The disk's floor under a durable call: what one synced write of a
//! page costs where the server's database lives, measured the way a
//! commit into an existing write-ahead log pays it: 4 KiB written inside
//! a file whose blocks are already allocated and synced (so the sync
//! flushes data, not the file's size or its block map), then
//! `fdatasync`.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::{Duration, Instant};

const PAGE: usize = 4096;
/// The pre-allocated span the pages are written into, in turn.
const PAGES: usize = 256;
/// Synced writes measured: the median of these is the floor.
const SAMPLES: usize = 1000;

/// The median of [`SAMPLES`] synced 4 KiB writes into a pre-allocated,
/// already-synced file in `dir`.
pub fn fsync_floor(dir: &Path) -> Duration {
    let path = dir.join("fsync-floor");
    let mut file = OpenOptions::new()
        .create(true)
        .truncate(true)
        .read(true)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    file.write_all(&vec![0u8; PAGE * PAGES]).expect("allocate");
    file.sync_all().expect("sync the allocated file");
    let page = [7u8; PAGE];
    let mut samples: Vec<Duration> = (0..SAMPLES)
        .map(|i| {
            let t = Instant::now();
            let offset = ((i % PAGES) * PAGE) as u64;
            file.write_all_at(&page, offset).expect("write");
            file.sync_data().expect("fdatasync");
            t.elapsed()
        })
        .collect();
    drop(file);
    let _ = std::fs::remove_file(&path);
    samples.sort();
    samples[SAMPLES / 2]
}
