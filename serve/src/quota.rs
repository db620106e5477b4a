//! Per-tenant quotas: Lua instructions and eval wall time per minute.
//!
//! Each quota is a bucket that holds up to one minute's allowance and
//! refills continuously at that rate. An eval is admitted when every
//! bucket of its tenant holds its worst case (its instruction limit and its
//! timeout, each capped at one minute's allowance), which it takes out at
//! once; when it ends, what it did not use goes back. So evals started
//! together never overdraw a quota, one eval is never charged more than a
//! minute's allowance, and a refused eval is told how long until the
//! buckets hold its worst case.

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

    /// How long until the bucket holds `need`; zero when it does.
    fn wait(&self, need: u64) -> Duration {
        #[allow(
            clippy::cast_precision_loss,
            reason = "need is at most a minute's allowance, a rate"
        )]
        let short = need as f64 - self.level;
        if short <= 0.0 {
            return Duration::ZERO;
        }
        let secs = short * 60.0 / self.per_minute;
        Duration::try_from_secs_f64(secs)
            .unwrap_or(Duration::from_secs(60))
            .saturating_add(Duration::from_millis(1))
    }

    /// What an eval whose worst case is `worst` takes out: at most one
    /// minute's allowance.
    fn cap(&self, worst: u64) -> u64 {
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "per_minute came from a u64, so it converts back exactly enough"
        )]
        let most = self.per_minute as u64;
        worst.min(most)
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
    /// `wall` when its buckets hold it (capped), taking it out; else how
    /// long until they do, and which quota is short.
    pub(crate) fn admit(
        &self,
        tenant: &str,
        instructions: u64,
        wall: Duration,
    ) -> Result<Reserved<'_>, (Duration, &'static str)> {
        let worst = Usage {
            instructions,
            wall_ms: millis(wall),
        };
        if let Some(buckets) = self.tenants.get(tenant) {
            let mut guard = buckets.lock().unwrap_or_else(PoisonError::into_inner);
            let buckets = &mut *guard;
            let now = Instant::now();
            let mut wait = (Duration::ZERO, "");
            for (bucket, worst, what) in [
                (
                    &mut buckets.instructions,
                    worst.instructions,
                    "instructions_per_minute",
                ),
                (&mut buckets.wall_ms, worst.wall_ms, "wall_ms_per_minute"),
            ] {
                if let Some(bucket) = bucket {
                    bucket.refill(now);
                    let until = bucket.wait(bucket.cap(worst));
                    if until > wait.0 {
                        wait = (until, what);
                    }
                }
            }
            // Refused: nothing was taken, so nothing is reserved.
            if !wait.0.is_zero() {
                return Err(wait);
            }
            if let Some(bucket) = &mut buckets.instructions {
                bucket.settle(bucket.cap(worst.instructions), 0);
            }
            if let Some(bucket) = &mut buckets.wall_ms {
                bucket.settle(bucket.cap(worst.wall_ms), 0);
            }
        }
        Ok(Reserved {
            quotas: self,
            tenant: tenant.to_owned(),
            worst,
            started: None,
            settled: false,
        })
    }

    /// Whether `tenant` has anything left: every bucket holds at least one
    /// unit; else how long until it does, and which quota is spent.
    /// Checked before a body is read, so that a tenant past its quota costs
    /// the server nothing more.
    pub(crate) fn check(&self, tenant: &str) -> Result<(), (Duration, &'static str)> {
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
                let until = bucket.wait(1);
                if until > wait.0 {
                    wait = (until, what);
                }
            }
        }
        if wait.0.is_zero() { Ok(()) } else { Err(wait) }
    }

    /// Charges `tenant` wall time spent on its behalf outside an eval (a
    /// body that was slow to arrive), which may leave its bucket in debt.
    pub(crate) fn charge_wall(&self, tenant: &str, wall: Duration) {
        let Some(buckets) = self.tenants.get(tenant) else {
            return;
        };
        let mut guard = buckets.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(bucket) = &mut guard.wall_ms {
            bucket.refill(Instant::now());
            bucket.settle(millis(wall), 0);
        }
    }

    /// Puts back what a reservation of `worst` took and the eval did not
    /// use.
    fn give_back(&self, tenant: &str, worst: Usage, used: Usage) {
        let Some(buckets) = self.tenants.get(tenant) else {
            return;
        };
        let mut guard = buckets.lock().unwrap_or_else(PoisonError::into_inner);
        let buckets = &mut *guard;
        let now = Instant::now();
        for (bucket, worst, used) in [
            (
                &mut buckets.instructions,
                worst.instructions,
                used.instructions,
            ),
            (&mut buckets.wall_ms, worst.wall_ms, used.wall_ms),
        ] {
            if let Some(bucket) = bucket {
                bucket.refill(now);
                let taken = bucket.cap(worst);
                bucket.settle(0, taken - used.min(taken));
            }
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// What an eval may use or used.
#[derive(Clone, Copy, Debug)]
struct Usage {
    instructions: u64,
    wall_ms: u64,
}

/// An eval's worst case, taken out of its tenant's buckets.
///
/// Dropped before [`Reserved::start`] (the eval never ran), all of it goes
/// back; dropped after it unsettled (the client went away mid-eval), the
/// eval is charged its wall time so far and its instruction limit.
pub(crate) struct Reserved<'a> {
    quotas: &'a Quotas,
    tenant: String,
    worst: Usage,
    started: Option<Instant>,
    settled: bool,
}

impl Reserved<'_> {
    /// Marks the eval as running from now.
    pub(crate) fn start(&mut self) {
        self.started = Some(Instant::now());
    }

    /// Charges what the eval used: `instructions` (its limit when the guest
    /// could not count, as after a timeout) and `wall`.
    pub(crate) fn settle(mut self, instructions: Option<u64>, wall: Duration) {
        self.settled = true;
        let used = Usage {
            instructions: instructions.unwrap_or(self.worst.instructions),
            wall_ms: millis(wall),
        };
        self.quotas.give_back(&self.tenant, self.worst, used);
    }
}

impl Drop for Reserved<'_> {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        let used = match self.started {
            None => Usage {
                instructions: 0,
                wall_ms: 0,
            },
            Some(at) => Usage {
                instructions: self.worst.instructions,
                wall_ms: millis(at.elapsed()),
            },
        };
        self.quotas.give_back(&self.tenant, self.worst, used);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spent_bucket_refuses_until_it_refills() {
        let start = Instant::now();
        let mut bucket = Bucket::new(600, start);
        assert_eq!(bucket.wait(600), Duration::ZERO);
        bucket.settle(600, 0);
        // Ten units a second: empty now.
        assert!(bucket.wait(1) > Duration::ZERO);
        bucket.settle(100, 0);
        let wait = bucket.wait(0);
        assert!(
            wait > Duration::from_secs(9) && wait < Duration::from_secs(11),
            "{wait:?}"
        );
        bucket.refill(start + Duration::from_secs(11));
        assert_eq!(bucket.wait(10), Duration::ZERO);
        // Never more than one minute's allowance.
        bucket.refill(start + Duration::from_secs(3600));
        assert!((bucket.level - 600.0).abs() < f64::EPSILON);
    }

    #[test]
    fn a_reservation_comes_back_when_the_eval_never_runs() {
        let quotas = quotas();
        let reserved = quotas.admit("a", 0, Duration::from_secs(5)).unwrap();
        assert!(quotas.admit("a", 0, Duration::from_millis(1)).is_err());
        drop(reserved);
        assert!(quotas.admit("a", 0, Duration::from_secs(5)).is_ok());
    }

    #[test]
    fn a_refused_request_gives_back_nothing() {
        let quotas = quotas();
        let _running = quotas.admit("a", 0, Duration::from_secs(5)).unwrap();
        // In debt: refused, however large its own worst case, and the
        // refusal puts nothing back.
        for _ in 0..3 {
            assert!(quotas.admit("a", 0, Duration::from_secs(5)).is_err());
        }
        assert!(quotas.admit("a", 0, Duration::from_millis(1)).is_err());
    }

    #[test]
    fn an_eval_abandoned_mid_run_is_charged_not_refunded() {
        let quotas = quotas();
        let mut reserved = quotas.admit("a", 0, Duration::from_secs(5)).unwrap();
        reserved.start();
        std::thread::sleep(Duration::from_millis(20));
        drop(reserved);
        // It used at least 20 of the 1000 ms; the rest came back.
        let level = quotas.level("a");
        assert!(level < 981.0 && level > 900.0, "{level}");
    }

    #[test]
    fn one_eval_is_charged_at_most_a_minute() {
        let quotas = quotas();
        // A worst case of a day takes out one minute's allowance, so the
        // tenant waits about a minute, not a day.
        let reserved = quotas.admit("a", 0, Duration::from_secs(86_400)).unwrap();
        let (wait, _) = quotas.admit("a", 0, Duration::from_secs(5)).err().unwrap();
        assert!(wait <= Duration::from_secs(61), "{wait:?}");
        reserved.settle(Some(0), Duration::from_secs(86_400));
        let (wait, _) = quotas.admit("a", 0, Duration::from_secs(5)).err().unwrap();
        assert!(wait <= Duration::from_secs(61), "{wait:?}");
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

    impl Quotas {
        /// The wall-time level of `tenant`, for tests.
        fn level(&self, tenant: &str) -> f64 {
            let buckets = self.tenants[tenant].lock().unwrap();
            buckets.wall_ms.as_ref().unwrap().level
        }
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
        let (wait, what) = quotas.admit("a", 0, Duration::from_secs(5)).err().unwrap();
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
        let (wait, what) = quotas.admit("a", 600, Duration::ZERO).err().unwrap();
        assert_eq!(what, "instructions_per_minute");
        assert!(wait > Duration::from_secs(50), "{wait:?}");
    }
}
