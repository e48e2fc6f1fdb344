//! Rate limiting per skill: one token bucket per skill id, refilled at a
//! steady rate up to its burst size. Time comes in as an argument, so the
//! buckets are tested without sleeping.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Deserialize;

/// A bucket's settings.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BucketConfig {
    /// Calls added back per minute.
    pub per_minute: f64,
    /// Calls that may be made at once.
    pub burst: u32,
}

impl BucketConfig {
    pub fn validate(&self) -> Result<(), String> {
        if !(self.per_minute.is_finite() && self.per_minute > 0.0) {
            return Err(format!(
                "per_minute must be a positive number, not {}",
                self.per_minute
            ));
        }
        if self.burst == 0 {
            return Err("burst must be at least 1".into());
        }
        Ok(())
    }
}

/// One bucket.
#[derive(Clone, Debug)]
pub struct TokenBucket {
    config: BucketConfig,
    tokens: f64,
    last: Instant,
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(config: BucketConfig, now: Instant) -> Self {
        Self {
            config,
            tokens: f64::from(config.burst),
            last: now,
        }
    }

    /// Takes one call's token, or says how long until one is available.
    pub fn try_take(&mut self, now: Instant) -> Result<(), Duration> {
        let per_sec = self.config.per_minute / 60.0;
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.tokens = (self.tokens + elapsed * per_sec).min(f64::from(self.config.burst));
        self.last = now.max(self.last);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - self.tokens) / per_sec))
        }
    }
}

/// The buckets of all skills.
#[derive(Debug)]
pub struct RateLimiter {
    configs: HashMap<String, BucketConfig>,
    fallback: BucketConfig,
    buckets: Mutex<HashMap<String, TokenBucket>>,
}

impl RateLimiter {
    /// `configs` by skill id; a skill without one gets `fallback`.
    pub fn new(configs: HashMap<String, BucketConfig>, fallback: BucketConfig) -> Self {
        Self {
            configs,
            fallback,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes a token of `skill`'s bucket at `now`; `Err` holds the wait.
    pub fn check_at(&self, skill: &str, now: Instant) -> Result<(), Duration> {
        let config = self.configs.get(skill).copied().unwrap_or(self.fallback);
        // A poisoned lock only means another request panicked mid-update;
        // the bucket's numbers are still usable.
        let mut buckets = self
            .buckets
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        buckets
            .entry(skill.to_string())
            .or_insert_with(|| TokenBucket::new(config, now))
            .try_take(now)
    }

    pub fn check(&self, skill: &str) -> Result<(), Duration> {
        self.check_at(skill, Instant::now())
    }
}

/// Whole seconds to wait, at least one: what `Retry-After` says.
pub fn retry_after_secs(wait: Duration) -> u64 {
    (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bursts_then_refills_at_the_rate() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(
            BucketConfig {
                per_minute: 60.0,
                burst: 3,
            },
            t0,
        );
        let s = Duration::from_secs;
        let ms = Duration::from_millis;
        // (time since t0, expected)
        let steps: Vec<(Duration, Result<(), Duration>)> = vec![
            (s(0), Ok(())),
            (s(0), Ok(())),
            (s(0), Ok(())),
            (s(0), Err(s(1))),
            (ms(500), Err(ms(500))),
            (s(1), Ok(())),
            (s(1), Err(s(1))),
            (s(100), Ok(())),
            (s(100), Ok(())),
            (s(100), Ok(())),
            (s(100), Err(s(1))),
        ];
        for (i, (at, expected)) in steps.into_iter().enumerate() {
            let got = b
                .try_take(t0 + at)
                .map_err(|d| Duration::from_millis(d.as_millis() as u64));
            assert_eq!(got, expected, "step {i}");
        }
    }

    #[test]
    fn each_skill_has_its_own_bucket() {
        let t0 = Instant::now();
        let one = BucketConfig {
            per_minute: 1.0,
            burst: 1,
        };
        let limiter = RateLimiter::new(
            HashMap::from([("web_fetch".to_string(), one)]),
            BucketConfig {
                per_minute: 60.0,
                burst: 2,
            },
        );
        assert_eq!(limiter.check_at("web_fetch", t0), Ok(()));
        assert_eq!(
            limiter.check_at("web_fetch", t0),
            Err(Duration::from_secs(60))
        );
        assert_eq!(limiter.check_at("web_search", t0), Ok(()));
        assert_eq!(limiter.check_at("web_search", t0), Ok(()));
        assert!(limiter.check_at("web_search", t0).is_err());
    }

    #[test]
    fn retry_after_rounds_up_to_whole_seconds() {
        let cases = [
            (Duration::from_millis(1), 1),
            (Duration::from_millis(999), 1),
            (Duration::from_secs(1), 1),
            (Duration::from_millis(1001), 2),
            (Duration::from_secs(60), 60),
            (Duration::ZERO, 1),
        ];
        for (wait, secs) in cases {
            assert_eq!(retry_after_secs(wait), secs, "{wait:?}");
        }
    }

    #[test]
    fn bad_settings_are_refused() {
        let bad = [(0.0, 1), (-1.0, 1), (f64::NAN, 1), (1.0, 0)];
        for (per_minute, burst) in bad {
            assert!(BucketConfig { per_minute, burst }.validate().is_err());
        }
    }
}
