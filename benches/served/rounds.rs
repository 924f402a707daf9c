//! Targets measured back to back in rounds: this machine's speed drifts
//! within a run (by half within minutes, `BENCHMARKS.md` part 18), so a
//! comparison is made within each round, where the drift moves both
//! sides alike, and the median of the rounds' ratios is reported. The
//! order rotates every round, so no target is always measured in
//! another's wake.

use crate::closed_loop::{self, Span, Window};
use crate::process::Target;

/// Every load's windows pooled over the rounds, and each round's window
/// per load.
pub struct Rounds {
    /// Per load, in the order given: every round's window as one.
    pub pooled: Vec<Window>,
    /// Per round, per load: what it saw in that round.
    each: Vec<Vec<Window>>,
}

impl Rounds {
    /// The rounds' ratios of target `a`'s server CPU per call to target
    /// `b`'s, sorted: the median first, then all of them.
    pub fn cpu_ratio(&self, a: usize, b: usize) -> (f64, Vec<f64>) {
        self.ratio(a, b, Window::cpu_per_request_us)
    }

    /// The rounds' ratios of `of` load `a`'s window to `of` load `b`'s:
    /// the median, then all of them, sorted.
    pub fn ratio(&self, a: usize, b: usize, of: impl Fn(&Window) -> f64) -> (f64, Vec<f64>) {
        let mut ratios: Vec<f64> = self.each.iter().map(|r| of(&r[a]) / of(&r[b])).collect();
        ratios.sort_by(f64::total_cmp);
        (ratios[ratios.len() / 2], ratios)
    }
}

/// `rounds` rounds of `clients` clients calling each of `targets`' `greet`
/// for `span`, one target after another.
pub fn greet_rounds(targets: &[&Target], clients: usize, span: Span, rounds: usize) -> Rounds {
    let loads: Vec<_> = targets
        .iter()
        .map(|t| move || closed_loop::greet(t, clients, span))
        .collect();
    let loads: Vec<&dyn Fn() -> Window> = loads.iter().map(|l| l as &dyn Fn() -> Window).collect();
    in_rounds(&loads, rounds)
}

/// `rounds` rounds of each of `loads` (each one measured window), one
/// load after another.
pub fn in_rounds(loads: &[&dyn Fn() -> Window], rounds: usize) -> Rounds {
    let mut pooled: Vec<Window> = loads.iter().map(|_| Window::default()).collect();
    let mut each = Vec::with_capacity(rounds);
    for round in 0..rounds {
        let mut this_round: Vec<Option<Window>> = loads.iter().map(|_| None).collect();
        for k in 0..loads.len() {
            let l = (k + round) % loads.len();
            let window = loads[l]();
            pooled[l] = std::mem::take(&mut pooled[l]).pooled(&window);
            this_round[l] = Some(window);
        }
        each.push(
            this_round
                .into_iter()
                .map(|w| w.expect("measured"))
                .collect(),
        );
    }
    Rounds { pooled, each }
}
