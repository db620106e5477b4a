//! Per-tenant quotas: Lua instructions and eval wall time per minute.
//!
//! Each quota is a bucket that holds up to one minute's allowance and
//! refills continuously at that rate. An eval is admitted while every
//! bucket of its tenant holds something; when it ends, what it actually
//! used is taken out, which may leave the bucket in debt (an eval's cost
//! is known only after it runs, and its own limits bound it). A tenant in
//! debt is refused with the time until its buckets refill past zero.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::keys::Keys;

/// One refilling allowance.
#[derive(Debug)]
struct Bucket {
    per_minute: f64,
    level: f64,
    at: Instant,
}

impl Bucket {
    fn new(per_minute: u64, now: Instant) -> Bucket {
        #[allow(
            clippy::cast_precision_loss,
            reason = "a quota is a rate; a rounding of one part in 2^53 does not matter"
        )]
        let per_minute = per_minute as f64;
        Bucket {
            per_minute,
            level: per_minute,
            at: now,
        }
    }

    fn refill(&mut self, now: Instant) {
        let secs = now.saturating_duration_since(self.at).as_secs_f64();
        self.level = (self.level + secs * self.per_minute / 60.0).min(self.per_minute);
        self.at = now;
    }

    /// How long until the level is above zero; zero when it is.
    fn wait(&self) -> Duration {
        if self.level > 0.0 {
            return Duration::ZERO;
        }
        let secs = (-self.level) * 60.0 / self.per_minute;
        Duration::try_from_secs_f64(secs)
            .unwrap_or(Duration::from_secs(60))
            .saturating_add(Duration::from_millis(1))
    }

    fn take(&mut self, used: u64) {
        #[allow(
            clippy::cast_precision_loss,
            reason = "usage is compared with a rate; exactness past 2^53 does not matter"
        )]
        let used = used as f64;
        // Debt is bounded by one minute's allowance more than the quota,
        // so that one huge eval does not lock a tenant out for hours.
        self.level = (self.level - used).max(-self.per_minute);
    }
}

#[derive(Debug, Default)]
struct Tenant {
    instructions: Option<Bucket>,
    wall_ms: Option<Bucket>,
}

/// The buckets of every tenant with a quota.
#[derive(Debug, Default)]
pub(crate) struct Quotas {
    tenants: HashMap<String, Mutex<Tenant>>,
}

impl Quotas {
    pub(crate) fn new(keys: &Keys) -> Quotas {
        let now = Instant::now();
        let tenants = keys
            .tenants()
            .iter()
            .map(|t| {
                let buckets = Tenant {
                    instructions: t.instructions_per_minute.map(|n| Bucket::new(n, now)),
                    wall_ms: t.wall_ms_per_minute.map(|n| Bucket::new(n, now)),
                };
                (t.name.clone(), Mutex::new(buckets))
            })
            .collect();
        Quotas { tenants }
    }

    /// `Ok` when `tenant` may start an eval now; else how long until it
    /// may, and which quota is spent.
    pub(crate) fn admit(&self, tenant: &str) -> Result<(), (Duration, &'static str)> {
        let Some(buckets) = self.tenants.get(tenant) else {
            return Ok(());
        };
        let mut guard = buckets.lock().unwrap_or_else(PoisonError::into_inner);
        let buckets = &mut *guard;
        let now = Instant::now();
        let mut wait = (Duration::ZERO, "");
        for (bucket, what) in [
            (&mut buckets.instructions, "instructions_per_minute"),
            (&mut buckets.wall_ms, "wall_ms_per_minute"),
        ] {
            if let Some(bucket) = bucket {
                bucket.refill(now);
                if bucket.wait() > wait.0 {
                    wait = (bucket.wait(), what);
                }
            }
        }
        if wait.0.is_zero() { Ok(()) } else { Err(wait) }
    }

    /// Takes what an eval of `tenant` used out of its buckets.
    pub(crate) fn charge(&self, tenant: &str, instructions: u64, wall: Duration) {
        let Some(buckets) = self.tenants.get(tenant) else {
            return;
        };
        let mut buckets = buckets.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        if let Some(bucket) = &mut buckets.instructions {
            bucket.refill(now);
            bucket.take(instructions);
        }
        if let Some(bucket) = &mut buckets.wall_ms {
            bucket.refill(now);
            bucket.take(u64::try_from(wall.as_millis()).unwrap_or(u64::MAX));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spent_bucket_refuses_until_it_refills() {
        let start = Instant::now();
        let mut bucket = Bucket::new(600, start);
        assert_eq!(bucket.wait(), Duration::ZERO);
        bucket.take(600);
        // Ten units a second: empty now, open again just after 0.
        assert!(bucket.wait() > Duration::ZERO);
        bucket.take(100);
        let wait = bucket.wait();
        assert!(
            wait > Duration::from_secs(9) && wait < Duration::from_secs(11),
            "{wait:?}"
        );
        bucket.refill(start + Duration::from_secs(11));
        assert_eq!(bucket.wait(), Duration::ZERO);
        // Never more than one minute's allowance.
        bucket.refill(start + Duration::from_secs(3600));
        assert!((bucket.level - 600.0).abs() < f64::EPSILON);
    }

    #[test]
    fn debt_is_bounded_by_one_minute() {
        let mut bucket = Bucket::new(60, Instant::now());
        bucket.take(u64::MAX);
        assert!(bucket.wait() <= Duration::from_secs(121));
    }

    #[test]
    fn tenants_are_charged_apart() {
        let text = format!(
            r#"{{"tenants": [
                {{"name": "a", "key_sha256": "{}", "wall_ms_per_minute": 1000}},
                {{"name": "b", "key_sha256": "{}"}}]}}"#,
            Keys::digest_hex("ka"),
            Keys::digest_hex("kb")
        );
        let quotas = Quotas::new(&Keys::parse(text.as_bytes()).unwrap());
        assert!(quotas.admit("a").is_ok());
        quotas.charge("a", 0, Duration::from_secs(2));
        let (wait, what) = quotas.admit("a").unwrap_err();
        assert_eq!(what, "wall_ms_per_minute");
        assert!(wait > Duration::from_secs(50), "{wait:?}");
        // b has no quota; an unknown tenant has none either.
        quotas.charge("b", u64::MAX, Duration::from_secs(3600));
        assert!(quotas.admit("b").is_ok());
        assert!(quotas.admit("nobody").is_ok());
    }
}
