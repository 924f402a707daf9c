//! Open-loop load: requests are sent on a fixed schedule, one every
//! `1 / rate` seconds, whatever the server is doing, and each one's
//! latency is measured from the time it was due, not the time it left.
//! A server that stalls for 50 ms is charged 50 ms on every request due
//! during the stall, as the people waiting on them would feel it; a
//! closed loop would send fewer requests instead and hide it.
//!
//! Senders are a pool of threads, each with its own keep-alive
//! connection; each takes the next request due, sleeps until it is due,
//! and sends it. A request taken late (every sender busy) still counts
//! from its due time; how many were taken late is reported.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use crate::support::keep_alive::KeepAlive;
use crate::support::mix::Kind;

/// Senders: far more than the requests in flight at half the capacity
/// (a few dozen at the worst moments of a gate's lock waits).
const SENDERS: usize = 64;
/// A request taken this long after it was due was late: every sender was
/// busy.
const LATE: Duration = Duration::from_millis(1);

/// What an open-loop run saw.
pub struct Schedule {
    /// Each request's kind and its latency from its due time.
    pub done: Vec<(Kind, Duration)>,
    /// Requests taken more than [`LATE`] after they were due.
    pub late: usize,
    /// From the first request's due time to the last answer.
    pub elapsed: Duration,
}

impl Schedule {
    /// The latencies of the requests of `kind`, shortest first.
    pub fn latencies(&self, kind: Kind) -> Vec<Duration> {
        let mut took: Vec<Duration> = self
            .done
            .iter()
            .filter(|(k, _)| *k == kind)
            .map(|(_, took)| *took)
            .collect();
        took.sort();
        took
    }
}

/// `rate` requests per second to the endpoint `url` for `length`, the
/// `i`th being `request(conn, i)`, which returns its kind.
pub fn run(
    url: &str,
    rate: f64,
    length: Duration,
    request: &(dyn Fn(&mut KeepAlive, usize) -> Kind + Sync),
) -> Schedule {
    let total = (rate * length.as_secs_f64()) as usize;
    let next = AtomicUsize::new(0);
    let late = AtomicUsize::new(0);
    let done = Mutex::new(Vec::with_capacity(total));
    let start = Instant::now() + Duration::from_millis(50);
    thread::scope(|s| {
        for _ in 0..SENDERS {
            let (next, late, done) = (&next, &late, &done);
            s.spawn(move || {
                let mut conn = KeepAlive::new(url);
                let mut mine = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= total {
                        break;
                    }
                    let due = start + Duration::from_secs_f64(i as f64 / rate);
                    let now = Instant::now();
                    if now < due {
                        thread::sleep(due - now);
                    } else if now - due > LATE {
                        late.fetch_add(1, Ordering::Relaxed);
                    }
                    let kind = request(&mut conn, i);
                    mine.push((kind, due.elapsed()));
                }
                done.lock().expect("results").extend(mine);
            });
        }
    });
    Schedule {
        done: done.into_inner().expect("results"),
        late: late.into_inner(),
        elapsed: start.elapsed(),
    }
}
