//! The places for reading request bodies: bounded in all, and per tenant,
//! so that one tenant's slow or stalled bodies cannot take every place.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The places each tenant holds.
type Held = Arc<Mutex<HashMap<Arc<str>, usize>>>;

/// Places for reading bodies.
#[derive(Debug)]
pub(crate) struct Readers {
    all: Arc<Semaphore>,
    per_tenant: usize,
    held: Held,
}

/// A place to read one body; released when dropped.
#[derive(Debug)]
pub(crate) struct Reading {
    _place: OwnedSemaphorePermit,
    tenant: Option<(Arc<str>, Held)>,
}

impl Drop for Reading {
    fn drop(&mut self) {
        if let Some((tenant, held)) = self.tenant.take() {
            let mut held = held.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(n) = held.get_mut(&tenant) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    held.remove(&tenant);
                }
            }
        }
    }
}

/// Why no place was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Full {
    /// Every place is taken.
    All,
    /// The tenant holds its share.
    Tenant(usize),
}

impl Readers {
    /// `total` places, of which one tenant may hold a quarter (at least
    /// one).
    pub(crate) fn new(total: usize) -> Readers {
        Readers {
            all: Arc::new(Semaphore::new(total)),
            per_tenant: (total / 4).max(1),
            held: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// A place for `tenant` (`None`: a server without keys, where every
    /// place is the one caller's).
    pub(crate) fn start(&self, tenant: Option<&Arc<str>>) -> Result<Reading, Full> {
        let Some(tenant) = tenant else {
            let place = self
                .all
                .clone()
                .try_acquire_owned()
                .map_err(|_| Full::All)?;
            return Ok(Reading {
                _place: place,
                tenant: None,
            });
        };
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let n = held.get(tenant).copied().unwrap_or(0);
        if n >= self.per_tenant {
            return Err(Full::Tenant(self.per_tenant));
        }
        let place = self
            .all
            .clone()
            .try_acquire_owned()
            .map_err(|_| Full::All)?;
        held.insert(tenant.clone(), n + 1);
        Ok(Reading {
            _place: place,
            tenant: Some((tenant.clone(), self.held.clone())),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tenant_holds_at_most_a_quarter_and_gives_places_back() {
        let readers = Readers::new(8);
        let (a, b): (Arc<str>, Arc<str>) = (Arc::from("a"), Arc::from("b"));
        let first = readers.start(Some(&a)).unwrap();
        let _second = readers.start(Some(&a)).unwrap();
        assert_eq!(readers.start(Some(&a)).unwrap_err(), Full::Tenant(2));
        // Another tenant still reads.
        let _other = readers.start(Some(&b)).unwrap();
        drop(first);
        let _again = readers.start(Some(&a)).unwrap();
        // Without keys, the one caller may use every place left.
        let anonymous: Vec<_> = (0..5).map(|_| readers.start(None).unwrap()).collect();
        assert_eq!(readers.start(None).unwrap_err(), Full::All);
        assert_eq!(readers.start(Some(&b)).unwrap_err(), Full::All);
        drop(anonymous);
        assert!(readers.held.lock().unwrap().len() == 2);
    }
}
