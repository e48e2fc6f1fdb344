//! Fakes for tests, shared by every crate above (behind the `testing`
//! feature, which only dev-dependencies turn on).

use std::cell::Cell;

use crate::TimeSource;

/// A clock that moves only when a test moves it: wall time starts at the
/// given instant and the monotonic clock at zero; [`FakeClock::advance`]
/// moves both, and a stepping clock also moves by its step after every
/// monotonic read, so each measured duration is that step.
#[derive(Debug, Default)]
pub struct FakeClock {
    unix_ms: Cell<f64>,
    monotonic_ms: Cell<f64>,
    step_ms: f64,
}

impl FakeClock {
    /// A clock standing at `unix_ms` (milliseconds since 1970).
    pub fn at(unix_ms: f64) -> FakeClock {
        FakeClock {
            unix_ms: Cell::new(unix_ms),
            monotonic_ms: Cell::new(0.0),
            step_ms: 0.0,
        }
    }

    /// The same clock, moving `step_ms` after every monotonic read.
    pub fn stepping(self, step_ms: f64) -> FakeClock {
        FakeClock { step_ms, ..self }
    }

    /// Moves wall time and the monotonic clock forward by `ms`.
    pub fn advance(&self, ms: f64) {
        self.unix_ms.set(self.unix_ms.get() + ms);
        self.monotonic_ms.set(self.monotonic_ms.get() + ms);
    }
}

impl TimeSource for FakeClock {
    fn now_unix_ms(&self) -> f64 {
        self.unix_ms.get()
    }

    fn monotonic_ms(&self) -> f64 {
        let now = self.monotonic_ms.get();
        self.monotonic_ms.set(now + self.step_ms);
        now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_only_when_told_or_by_its_step() {
        let still = FakeClock::at(1_000.0);
        assert_eq!((still.now_unix_ms(), still.monotonic_ms()), (1_000.0, 0.0));
        assert_eq!(still.monotonic_ms(), 0.0);
        still.advance(250.0);
        assert_eq!(
            (still.now_unix_ms(), still.monotonic_ms()),
            (1_250.0, 250.0)
        );

        let stepping = FakeClock::at(0.0).stepping(5.0);
        let reads: Vec<f64> = (0..3).map(|_| stepping.monotonic_ms()).collect();
        assert_eq!(reads, [0.0, 5.0, 10.0]);
        assert_eq!(stepping.now_unix_ms(), 0.0);
    }
}
