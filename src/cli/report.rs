//! Phases of a command: a progress bar for each (hidden off a terminal or with --quiet), and their times for --timings.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::error::CliError;

/// How often a spinner redraws while its phase blocks in one call (a sort on the GPU).
const SPINNER_TICK: Duration = Duration::from_millis(100);
/// Redraws per second of a bar at most: enough to look live, few enough to cost nothing.
const DRAW_RATE_HZ: u8 = 10;
/// The look of a byte bar, a spinner and a counting bar (indicatif templates): the phase's name,
/// then its progress.
const BAR_TEMPLATE: &str =
    "{prefix:>16} [{bar:32}] {bytes}/{total_bytes} ({binary_bytes_per_sec}, {eta} left)";
const SPINNER_TEMPLATE: &str = "{prefix:>16} {spinner} {elapsed}";
const COUNT_TEMPLATE: &str = "{prefix:>16} [{bar:32}] {pos}/{len} {msg}";
/// Seconds per millisecond, for the timings table.
const MS_PER_S: f64 = 1e3;
/// Bytes per gigabyte (decimal, as transfer rates are given).
const BYTES_PER_GB: f64 = 1e9;

/// One finished phase: its name, time and the bytes it moved (if it moved any).
#[derive(Clone, Debug)]
struct Phase {
    name: String,
    time: Duration,
    bytes: Option<u64>,
}

/// The phases of one command, with their progress bars.
pub struct Reporter {
    bars: bool,
    timings: bool,
    phases: Vec<Phase>,
    start: Instant,
}

impl Reporter {
    /// Bars on stderr when it is a terminal and not `quiet`; times printed at the end when
    /// `timings`.
    pub fn new(quiet: bool, timings: bool) -> Self {
        Reporter {
            bars: !quiet && std::io::stderr().is_terminal(),
            timings,
            phases: Vec::new(),
            start: Instant::now(),
        }
    }

    fn target(&self) -> ProgressDrawTarget {
        if self.bars {
            ProgressDrawTarget::stderr_with_hz(DRAW_RATE_HZ)
        } else {
            ProgressDrawTarget::hidden()
        }
    }

    /// A bar counting `total` bytes.
    fn bytes_bar(&self, name: &str, total: u64) -> ProgressBar {
        let bar = ProgressBar::with_draw_target(Some(total), self.target());
        if let Ok(style) = ProgressStyle::with_template(BAR_TEMPLATE) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix(name.to_owned());
        bar
    }

    /// A spinner for a phase that is one blocking call.
    fn spinner(&self, name: &str) -> ProgressBar {
        let bar = ProgressBar::with_draw_target(None, self.target());
        if let Ok(style) = ProgressStyle::with_template(SPINNER_TEMPLATE) {
            bar.set_style(style);
        }
        bar.set_prefix(name.to_owned());
        bar.enable_steady_tick(SPINNER_TICK);
        bar
    }

    /// A bar counting `total` steps, with a message (the benchmark's rows).
    pub fn count_bar(&self, name: &str, total: u64) -> ProgressBar {
        let bar = ProgressBar::with_draw_target(Some(total), self.target());
        if let Ok(style) = ProgressStyle::with_template(COUNT_TEMPLATE) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix(name.to_owned());
        bar
    }

    /// Run `work`, a phase moving `bytes` bytes, under a byte bar it advances itself.
    pub fn bytes_phase<T>(
        &mut self,
        name: &str,
        bytes: u64,
        work: impl FnOnce(&ProgressBar) -> Result<T, CliError>,
    ) -> Result<T, CliError> {
        let bar = self.bytes_bar(name, bytes);
        self.timed(name, Some(bytes), bar, work)
    }

    /// Run `work`, one blocking step, under a spinner; `bytes` it moves, if any, for the rate.
    pub fn phase<T>(
        &mut self,
        name: &str,
        bytes: Option<u64>,
        work: impl FnOnce() -> Result<T, CliError>,
    ) -> Result<T, CliError> {
        let bar = self.spinner(name);
        self.timed(name, bytes, bar, |_| work())
    }

    fn timed<T>(
        &mut self,
        name: &str,
        bytes: Option<u64>,
        bar: ProgressBar,
        work: impl FnOnce(&ProgressBar) -> Result<T, CliError>,
    ) -> Result<T, CliError> {
        let start = Instant::now();
        let result = work(&bar);
        bar.finish_and_clear();
        self.phases.push(Phase {
            name: name.to_owned(),
            time: start.elapsed(),
            bytes,
        });
        result
    }

    /// With --timings, each phase's time, share and rate on stderr, then the total.
    pub fn finish(&self) {
        if !self.timings {
            return;
        }
        let total = self.start.elapsed();
        eprintln!("{:<24} {:>10} {:>7} {:>12}", "phase", "ms", "share", "rate");
        for phase in &self.phases {
            let rate = phase
                .bytes
                .filter(|_| !phase.time.is_zero())
                .map(|bytes| {
                    format!(
                        "{:.2} GB/s",
                        bytes as f64 / phase.time.as_secs_f64() / BYTES_PER_GB
                    )
                })
                .unwrap_or_default();
            eprintln!(
                "{:<24} {:>10.1} {:>6.1}% {:>12}",
                phase.name,
                phase.time.as_secs_f64() * MS_PER_S,
                share(phase.time, total),
                rate
            );
        }
        let listed: Duration = self.phases.iter().map(|p| p.time).sum();
        eprintln!(
            "{:<24} {:>10.1} {:>6.1}%",
            "other",
            total.saturating_sub(listed).as_secs_f64() * MS_PER_S,
            share(total.saturating_sub(listed), total)
        );
        eprintln!(
            "{:<24} {:>10.1} {:>6.1}%",
            "total",
            total.as_secs_f64() * MS_PER_S,
            100.0
        );
    }
}

/// `part` as a percentage of `total`.
fn share(part: Duration, total: Duration) -> f64 {
    if total.is_zero() {
        0.0
    } else {
        100.0 * part.as_secs_f64() / total.as_secs_f64()
    }
}
