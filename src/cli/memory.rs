//! How much memory a command may use: the host's available memory (Linux: MemAvailable), and the refusal of inputs that would not fit.

use super::error::{Bytes, CliError};

/// Overrides the available memory, in bytes (tests; capping a run on a shared machine).
pub const MEMORY_ENV: &str = "TWOPHASE_MEMORY_AVAILABLE";

/// Host memory a command needs per byte of its inputs: the data itself, the sort's scratch (the
/// CPU merge passes ping-pong between two buffers; pairs sort through a third, of tuples) and the
/// output buffers of a merge or search. Three input sizes cover the largest of these, pairs on the
/// CPU.
pub const WORKING_SPACE_FACTOR: u64 = 3;

/// Bytes per kB in /proc/meminfo (its "kB" are KiB).
const MEMINFO_UNIT: u64 = 1024;

/// The memory this process may still take, in bytes: `$TWOPHASE_MEMORY_AVAILABLE`, else
/// `MemAvailable` from /proc/meminfo; `None` where neither is known (then nothing is refused).
pub fn available_memory() -> Option<u64> {
    if let Some(bytes) = std::env::var(MEMORY_ENV)
        .ok()
        .and_then(|v| v.trim().parse().ok())
    {
        return Some(bytes);
    }
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    meminfo_available(&meminfo)
}

/// `MemAvailable` of a /proc/meminfo text, in bytes.
fn meminfo_available(meminfo: &str) -> Option<u64> {
    let line = meminfo
        .lines()
        .find_map(|line| line.strip_prefix("MemAvailable:"))?;
    let kib: u64 = line.trim().trim_end_matches("kB").trim().parse().ok()?;
    kib.checked_mul(MEMINFO_UNIT)
}

/// Refuse `what` when inputs of `input_bytes` need more than the available memory
/// ([`WORKING_SPACE_FACTOR`] times their size).
pub fn check_fits(what: &str, input_bytes: u64) -> Result<(), CliError> {
    check_needed(what, input_bytes.saturating_mul(WORKING_SPACE_FACTOR))
}

/// Refuse `what` when it needs more than the available memory: `needed` bytes in all.
pub fn check_needed(what: &str, needed: u64) -> Result<(), CliError> {
    match available_memory() {
        Some(available) if needed > available => Err(CliError::TooLarge {
            what: what.to_owned(),
            needed: Bytes(needed),
            available: Bytes(available),
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_available_is_read_in_bytes() {
        let meminfo = "MemTotal:       24576000 kB\nMemFree:  1000 kB\nMemAvailable:   2048 kB\n";
        assert_eq!(meminfo_available(meminfo), Some(2048 * 1024));
        assert_eq!(meminfo_available("MemTotal: 5 kB\n"), None);
    }
}
