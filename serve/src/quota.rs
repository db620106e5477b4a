//! Per-tenant quotas: Lua instructions and eval wall time per minute.
//!
//! Each quota is a bucket that holds up to one minute's allowance and
//! refills continuously at that rate. An eval is admitted while every
//! bucket of its tenant holds something, and takes out its worst case at
//! once (its instruction limit and its timeout); when it ends, what it did
//! not use goes back. So evals started together cannot overdraw the quota
//! by more than one eval's worst case, and a tenant in debt is refused with
//! the time until its buckets refill past zero.

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

    /// Takes `taken` out and puts `returned` back.
    fn settle(&mut self, taken: u64, returned: u64) {
        #[allow(
            clippy::cast_precision_loss,
            reason = "usage is compared with a rate; exactness past 2^53 does not matter"
        )]
        let delta = returned as f64 - taken as f64;
        self.level = (self.level + delta).min(self.per_minute);
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

    /// Admits an eval of `tenant` whose worst case is `instructions` and
    /// `wall`, taking that out of its buckets; else how long until it may
    /// start, and which quota is spent.
    pub(crate) fn admit(
        &self,
        tenant: &str,
        instructions: u64,
        wall: Duration,
    ) -> Result<Reserved<'_>, (Duration, &'static str)> {
        let reserved = Reserved {
            quotas: self,
            tenant: tenant.to_owned(),
            instructions,
            wall_ms: millis(wall),
            settled: false,
        };
        let Some(buckets) = self.tenants.get(tenant) else {
            return Ok(reserved);
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
        if !wait.0.is_zero() {
            return Err(wait);
        }
        if let Some(bucket) = &mut buckets.instructions {
            bucket.settle(instructions, 0);
        }
        if let Some(bucket) = &mut buckets.wall_ms {
            bucket.settle(reserved.wall_ms, 0);
        }
        Ok(reserved)
    }

    fn give_back(&self, tenant: &str, instructions: u64, wall_ms: u64) {
        let Some(buckets) = self.tenants.get(tenant) else {
            return;
        };
        let mut buckets = buckets.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        if let Some(bucket) = &mut buckets.instructions {
            bucket.refill(now);
            bucket.settle(0, instructions);
        }
        if let Some(bucket) = &mut buckets.wall_ms {
            bucket.refill(now);
            bucket.settle(0, wall_ms);
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// An eval's worst case, taken out of its tenant's buckets. Dropped
/// unsettled (the eval never ran), all of it goes back.
pub(crate) struct Reserved<'a> {
    quotas: &'a Quotas,
    tenant: String,
    instructions: u64,
    wall_ms: u64,
    settled: bool,
}

impl Reserved<'_> {
    /// Charges what the eval used: `instructions` (its limit when the guest
    /// could not count, as after a timeout) and `wall`.
    pub(crate) fn settle(mut self, instructions: Option<u64>, wall: Duration) {
        self.settled = true;
        let used = instructions.unwrap_or(self.instructions);
        self.quotas.give_back(
            &self.tenant,
            self.instructions.saturating_sub(used),
            self.wall_ms.saturating_sub(millis(wall)),
        );
    }
}

impl Drop for Reserved<'_> {
    fn drop(&mut self) {
        if !self.settled {
            self.quotas
                .give_back(&self.tenant, self.instructions, self.wall_ms);
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
        bucket.settle(600, 0);
        // Ten units a second: empty now, open again just after 0.
        assert!(bucket.wait() > Duration::ZERO);
        bucket.settle(100, 0);
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
    fn a_reservation_comes_back_when_the_eval_never_runs() {
        let quotas = quotas();
        let reserved = quotas.admit("a", 0, Duration::from_secs(5)).unwrap();
        assert!(quotas.admit("a", 0, Duration::ZERO).is_err());
        drop(reserved);
        assert!(quotas.admit("a", 0, Duration::ZERO).is_ok());
    }

    #[test]
    fn evals_started_together_cannot_overdraw_by_more_than_one() {
        let quotas = quotas();
        // The first takes its worst case (the timeout); the second finds
        // the bucket empty, however short it would be.
        let first = quotas.admit("a", 0, Duration::from_secs(5)).unwrap();
        assert!(quotas.admit("a", 0, Duration::from_millis(1)).is_err());
        // It used 100 ms: the rest comes back, and b never pays.
        first.settle(Some(0), Duration::from_millis(100));
        assert!(quotas.admit("a", 0, Duration::ZERO).is_ok());
        assert!(quotas.admit("b", u64::MAX, Duration::MAX).is_ok());
    }

    fn quotas() -> Quotas {
        let text = format!(
            r#"{{"tenants": [
                {{"name": "a", "key_sha256": "{}", "wall_ms_per_minute": 1000}},
                {{"name": "b", "key_sha256": "{}"}}]}}"#,
            Keys::digest_hex("ka"),
            Keys::digest_hex("kb")
        );
        Quotas::new(&Keys::parse(text.as_bytes()).unwrap())
    }

    #[test]
    fn tenants_are_charged_apart() {
        let quotas = quotas();
        let spent = quotas.admit("a", 0, Duration::from_secs(2)).unwrap();
        spent.settle(Some(0), Duration::from_secs(2));
        let (wait, what) = quotas.admit("a", 0, Duration::ZERO).err().unwrap();
        assert_eq!(what, "wall_ms_per_minute");
        assert!(wait > Duration::from_secs(50), "{wait:?}");
        // b has no quota; an unknown tenant has none either.
        assert!(quotas.admit("b", 0, Duration::ZERO).is_ok());
        assert!(quotas.admit("nobody", 0, Duration::ZERO).is_ok());
    }

    #[test]
    fn an_eval_the_guest_could_not_count_is_charged_its_limit() {
        let text = format!(
            r#"{{"tenants": [{{"name": "a", "key_sha256": "{}", "instructions_per_minute": 600}}]}}"#,
            Keys::digest_hex("ka")
        );
        let quotas = Quotas::new(&Keys::parse(text.as_bytes()).unwrap());
        let timed_out = quotas.admit("a", 1200, Duration::ZERO).unwrap();
        timed_out.settle(None, Duration::ZERO);
        let (wait, what) = quotas.admit("a", 1, Duration::ZERO).err().unwrap();
        assert_eq!(what, "instructions_per_minute");
        assert!(wait > Duration::from_secs(59), "{wait:?}");
    }
}
