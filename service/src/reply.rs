//! [`Budget`]: the memory for answers being sent, shared by every
//! connection, so that clients that read slowly cannot make the server hold
//! more answers than configured.

use std::sync::Arc;

use axum::body::Bytes;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Answers of at most this many bytes are sent without taking from the
/// budget: each connection holds at most one, so the connection cap bounds
/// them (512 connections hold at most 32 MiB of them).
pub const SMALL_REPLY_BYTES: usize = 64 << 10;

/// The budget is counted in units of this many bytes.
const UNIT: usize = 1 << 10;

/// The memory answers larger than [`SMALL_REPLY_BYTES`] may hold at once,
/// from when they are encoded until the client has taken them (or the
/// write timeout has cut it off). A cheap handle; clones share the budget.
///
/// ```
/// let budget = moonbox_service::reply::Budget::new(1 << 20);
/// let held = budget.hold(vec![b'x'; 600 << 10]).unwrap();
/// // A second answer that does not fit is given back.
/// assert!(budget.hold(vec![b'y'; 600 << 10]).is_err());
/// drop(held);
/// assert!(budget.hold(vec![b'y'; 600 << 10]).is_ok());
/// ```
#[derive(Clone, Debug)]
pub struct Budget {
    units: Arc<Semaphore>,
}

/// An answer's bytes with the part of the budget they hold.
struct Held {
    bytes: Vec<u8>,
    _place: OwnedSemaphorePermit,
}

impl AsRef<[u8]> for Held {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

impl Budget {
    /// A budget of `bytes` (rounded up to whole KiB).
    pub fn new(bytes: usize) -> Budget {
        let units = bytes.div_ceil(UNIT).min(Semaphore::MAX_PERMITS);
        Budget {
            units: Arc::new(Semaphore::new(units)),
        }
    }

    /// The answer as `Bytes` that hold their part of the budget until the
    /// last copy is dropped (hyper drops them once they are written, or
    /// when the connection closes); `Err` gives the answer back when the
    /// budget does not have room for it now. A small answer always fits.
    ///
    /// # Errors
    /// The answer itself, when it does not fit.
    pub fn hold(&self, bytes: Vec<u8>) -> Result<Bytes, Vec<u8>> {
        if bytes.len() <= SMALL_REPLY_BYTES {
            return Ok(Bytes::from(bytes));
        }
        let units = u32::try_from(bytes.len().div_ceil(UNIT)).unwrap_or(u32::MAX);
        match self.units.clone().try_acquire_many_owned(units) {
            Ok(place) => Ok(Bytes::from_owner(Held {
                bytes,
                _place: place,
            })),
            Err(_) => Err(bytes),
        }
    }
}
