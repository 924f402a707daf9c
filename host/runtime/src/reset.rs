//! How a pool slot's linear memory is reset between callers, decided once
//! at start-up.
//!
//! The fast reset asks the kernel (`PAGEMAP_SCAN`, Linux 6.7+) which pages
//! a call wrote and resets only those. The scan matches pages that are
//! `WRITTEN` and `PRESENT`: a written page the kernel swapped out is
//! `SWAPPED`, not `PRESENT`, so it is neither reset nor decommitted, and the
//! next instance in that slot reads the previous caller's data once it is
//! swapped back in (wasmtime pull request 14357). Until wasmtime's scan
//! accounts for swapped pages, the host uses it only where this process's
//! memory cannot be swapped; elsewhere the pool resets the kept-resident
//! prefix whole and decommits the rest, which drops swapped pages too.
//!
//! What counts as "swap can happen" (see [`choose`]): an active entry in
//! `/proc/swaps` (a device, a file or zram), unless this process's cgroup
//! v2 says it may not swap (`memory.swap.max` is `0`). An unreadable
//! `/proc/swaps` counts as swap: the fast path needs proof. Only the
//! process's own cgroup is read: an ancestor's `0` would also keep it out
//! of swap, but missing it only costs speed, never isolation. The decision
//! is made when the runtime starts: swap switched on later needs a restart.

use std::path::{Path, PathBuf};

/// How the pool resets a slot's linear memory between callers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryReset {
    /// Only the pages a call dirtied, found with `PAGEMAP_SCAN` where the
    /// kernel has it (elsewhere wasmtime falls back to [`Self::WholePrefix`]
    /// by itself). Safe only where this process's memory is not swapped.
    DirtyPages {
        /// Why swap cannot reach this process's memory.
        why: &'static str,
    },
    /// The first `keep_resident` bytes reset whole, the rest handed back to
    /// the OS: correct whatever the kernel did with the pages, and slower
    /// for guests that touch little (BENCHMARKS.md part 8).
    WholePrefix {
        /// Why the dirty-page scan is not used.
        why: &'static str,
    },
}

impl MemoryReset {
    /// Whether the pool may use `PAGEMAP_SCAN`.
    pub fn uses_pagemap_scan(self) -> bool {
        matches!(self, Self::DirtyPages { .. })
    }

    /// Why this reset was chosen, for the start-up log.
    pub fn why(self) -> &'static str {
        match self {
            Self::DirtyPages { why } | Self::WholePrefix { why } => why,
        }
    }
}

/// The two files the choice is made from, as read (or as a test gives them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SwapFiles {
    /// `/proc/swaps`; `None` if it could not be read.
    pub proc_swaps: Option<String>,
    /// This process's cgroup v2 `memory.swap.max`; `None` where there is
    /// none (cgroup v1, the root cgroup, no memory controller).
    pub swap_max: Option<String>,
}

/// Where the runtime learns whether swap can reach its memory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum SwapProbe {
    /// Read `/proc/swaps` and this process's cgroup at start-up.
    #[default]
    System,
    /// These contents instead: for tests, which cannot switch swap on.
    Files(SwapFiles),
}

impl SwapProbe {
    /// The files this probe stands for.
    pub fn read(&self) -> SwapFiles {
        match self {
            Self::System => SwapFiles {
                proc_swaps: std::fs::read_to_string("/proc/swaps").ok(),
                swap_max: own_cgroup()
                    .and_then(|dir| std::fs::read_to_string(dir.join("memory.swap.max")).ok()),
            },
            Self::Files(files) => files.clone(),
        }
    }
}

/// This process's cgroup v2 directory, from the `0::` line of
/// `/proc/self/cgroup`, where cgroup v2 is mounted at `/sys/fs/cgroup`.
fn own_cgroup() -> Option<PathBuf> {
    let lines = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = lines.lines().find_map(|l| l.strip_prefix("0::"))?;
    Some(Path::new("/sys/fs/cgroup").join(path.trim().trim_start_matches('/')))
}

/// The reset for a host whose swap files read `files`: the dirty-page scan
/// only where no swap is active or the cgroup may not use it.
pub fn choose(files: &SwapFiles) -> MemoryReset {
    let Some(swaps) = &files.proc_swaps else {
        return MemoryReset::WholePrefix {
            why: "/proc/swaps could not be read, so swap cannot be ruled out",
        };
    };
    // The first line is the header ("Filename Type Size Used Priority").
    if swaps.lines().skip(1).all(|l| l.trim().is_empty()) {
        return MemoryReset::DirtyPages {
            why: "no swap is active (/proc/swaps lists none)",
        };
    }
    match files.swap_max.as_deref().map(str::trim) {
        Some("0") => MemoryReset::DirtyPages {
            why: "swap is active but this cgroup may not use it (memory.swap.max is 0)",
        },
        Some(_) => MemoryReset::WholePrefix {
            why: "swap is active and this cgroup may use it (memory.swap.max is not 0): \
                  PAGEMAP_SCAN misses written pages that were swapped out",
        },
        None => MemoryReset::WholePrefix {
            why: "swap is active and no cgroup v2 memory.swap.max keeps this process out of it: \
                  PAGEMAP_SCAN misses written pages that were swapped out",
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n";
    const ONE_FILE: &str = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n\
                            /swapfile                               file\t\t2097148\t\t0\t\t-2\n";
    const ZRAM: &str = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n\
                        /dev/zram0                              partition\t4194300\t\t1024\t\t100\n";

    fn files(proc_swaps: Option<&str>, swap_max: Option<&str>) -> SwapFiles {
        SwapFiles {
            proc_swaps: proc_swaps.map(str::to_owned),
            swap_max: swap_max.map(str::to_owned),
        }
    }

    #[test]
    fn the_scan_is_used_only_where_swap_cannot_reach_the_process() {
        let table: &[(Option<&str>, Option<&str>, bool)] = &[
            // No swap active: the scan, whatever the cgroup says.
            (Some(HEADER), None, true),
            (Some(HEADER), Some("max\n"), true),
            (Some(""), None, true),
            (
                Some("Filename Type Size Used Priority\n\n"),
                Some("max\n"),
                true,
            ),
            // Swap active and the cgroup may use it, or says nothing: no scan.
            (Some(ONE_FILE), None, false),
            (Some(ONE_FILE), Some("max\n"), false),
            (Some(ONE_FILE), Some("1073741824\n"), false),
            (Some(ZRAM), Some("4096\n"), false),
            (Some(ZRAM), Some("garbage"), false),
            (Some(ZRAM), Some(""), false),
            // Swap active but this cgroup may not swap: the scan.
            (Some(ONE_FILE), Some("0\n"), true),
            (Some(ZRAM), Some("0"), true),
            // Unreadable /proc/swaps: swap cannot be ruled out.
            (None, None, false),
            (None, Some("0\n"), false),
        ];
        for (swaps, max, scan) in table {
            let reset = choose(&files(*swaps, *max));
            assert_eq!(
                reset.uses_pagemap_scan(),
                *scan,
                "{swaps:?} {max:?}: {reset:?}"
            );
            assert!(!reset.why().is_empty());
        }
    }

    #[test]
    fn a_given_probe_reads_what_it_was_given() {
        let given = files(Some(ONE_FILE), Some("max\n"));
        assert_eq!(SwapProbe::Files(given.clone()).read(), given);
    }
}
