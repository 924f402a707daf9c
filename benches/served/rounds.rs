//! Targets measured back to back in rounds: this machine's speed drifts
//! within a run (by half within minutes, `BENCHMARKS.md` part 18), so a
//! comparison is made within each round, where the drift moves both
//! sides alike, and the median of the rounds' ratios is reported. The
//! order rotates every round, so no target is always measured in
//! another's wake.

use crate::closed_loop::{self, Span, Window};
use crate::process::Target;

/// Every target's windows pooled over the rounds, and each round's window
/// per target.
pub struct Rounds {
    /// Per target, in the order given: every round's window as one.
    pub pooled: Vec<Window>,
    /// Per round, per target: µs of server CPU per call.
    cpu_per_call: Vec<Vec<f64>>,
}

impl Rounds {
    /// The rounds' ratios of target `a`'s server CPU per call to target
    /// `b`'s, sorted: the median first, then all of them.
    pub fn cpu_ratio(&self, a: usize, b: usize) -> (f64, Vec<f64>) {
        let mut ratios: Vec<f64> = self.cpu_per_call.iter().map(|r| r[a] / r[b]).collect();
        ratios.sort_by(f64::total_cmp);
        (ratios[ratios.len() / 2], ratios)
    }
}

/// `rounds` rounds of `clients` clients calling each of `targets`' `greet`
/// for `span`, one target after another.
pub fn greet_rounds(targets: &[&Target], clients: usize, span: Span, rounds: usize) -> Rounds {
    let mut pooled: Vec<Window> = targets.iter().map(|_| Window::default()).collect();
    let mut cpu_per_call = Vec::with_capacity(rounds);
    for round in 0..rounds {
        let mut this_round = vec![0.0; targets.len()];
        for k in 0..targets.len() {
            let t = (k + round) % targets.len();
            let window = closed_loop::greet(targets[t], clients, span);
            this_round[t] = window.cpu_per_request_us();
            pooled[t] = std::mem::take(&mut pooled[t]).pooled(&window);
        }
        cpu_per_call.push(this_round);
    }
    Rounds {
        pooled,
        cpu_per_call,
    }
}
