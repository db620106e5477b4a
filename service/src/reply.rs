//! Answers within bounds, for every server:
//!
//! - one answer's size: [`within`] encodes JSON only up to a bound, so a
//!   script that returns a huge value costs no more than that, and
//!   [`shrink`] drops a report's values (then what the script wrote) until
//!   it fits, so that the refusal still says what the eval did and cost;
//! - the memory of answers sent but not yet taken: [`Budget`], shared by
//!   every connection, so that clients that read slowly cannot make the
//!   server hold more answers than configured.
//!
//! The bounds' defaults and ranges are declared here once
//! ([`DEFAULT_MAX_REPLY_BYTES`], [`DEFAULT_REPLY_MEMORY`], [`check`]).

use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};

use axum::body::{Body, Bytes};
use serde_json::{Map, Value};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::ConfigError;

/// Default bound of one answer's JSON.
pub const DEFAULT_MAX_REPLY_BYTES: usize = 16 << 20;
/// Least bound of one answer's JSON: room for a refusal with its report.
pub const MIN_MAX_REPLY_BYTES: usize = SMALL_REPLY_BYTES;
/// Default memory for answers over [`SMALL_REPLY_BYTES`] not yet taken.
pub const DEFAULT_REPLY_MEMORY: usize = 256 << 20;
/// Most of either bound.
pub const MAX_REPLY_MEMORY: usize = 1 << 40;

/// Checks an answer's bound (`max_reply_bytes`: [`MIN_MAX_REPLY_BYTES`] to
/// [`MAX_REPLY_MEMORY`]) and the memory for answers (`reply_memory`: at
/// least `max_reply_bytes`, so that an answer at its bound fits).
///
/// # Errors
/// A [`ConfigError`] that names the setting out of range.
///
/// ```
/// use moonbox_service::reply;
/// assert!(reply::check(reply::DEFAULT_MAX_REPLY_BYTES, reply::DEFAULT_REPLY_MEMORY).is_ok());
/// assert!(reply::check(1 << 20, 1 << 10).is_err());
/// ```
pub fn check(max_reply_bytes: usize, reply_memory: usize) -> Result<(), ConfigError> {
    if !(MIN_MAX_REPLY_BYTES..=MAX_REPLY_MEMORY).contains(&max_reply_bytes) {
        return Err(ConfigError(format!(
            "max_reply_bytes is {max_reply_bytes}; use {MIN_MAX_REPLY_BYTES} to {MAX_REPLY_MEMORY}"
        )));
    }
    if !(max_reply_bytes..=MAX_REPLY_MEMORY).contains(&reply_memory) {
        return Err(ConfigError(format!(
            "reply_memory is {reply_memory}; use max_reply_bytes ({max_reply_bytes}) to {MAX_REPLY_MEMORY}, so that an answer at its bound fits"
        )));
    }
    Ok(())
}

/// A writer that refuses to grow past its bound.
struct Bounded {
    bytes: Vec<u8>,
    max: usize,
}

impl Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.bytes.len().saturating_add(buf.len()) > self.max {
            return Err(std::io::Error::other("past the bound"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `value` as JSON text of at most `max` bytes, or `None` past it (having
/// written no more than `max`).
///
/// ```
/// let value = serde_json::json!({"values": ["abc"]});
/// assert_eq!(moonbox_service::reply::within(&value, 100).unwrap(), br#"{"values":["abc"]}"#);
/// assert!(moonbox_service::reply::within(&value, 10).is_none());
/// ```
pub fn within(value: &Value, max: usize) -> Option<Vec<u8>> {
    let mut out = Bounded {
        bytes: Vec::new(),
        max,
    };
    serde_json::to_writer(&mut out, value).ok()?;
    Some(out.bytes)
}

/// The length of `value` as JSON text when it is at most `max` bytes, or
/// `None` past it; nothing is kept, so measuring a large value costs no
/// memory.
///
/// ```
/// let value = serde_json::json!({"values": ["abc"]});
/// assert_eq!(moonbox_service::reply::size_within(&value, 100), Some(18));
/// assert_eq!(moonbox_service::reply::size_within(&value, 10), None);
/// ```
pub fn size_within(value: &Value, max: usize) -> Option<usize> {
    struct Count {
        len: usize,
        max: usize,
    }
    impl Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.len = self.len.saturating_add(buf.len());
            if self.len > self.max {
                return Err(std::io::Error::other("past the bound"));
            }
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count { len: 0, max };
    serde_json::to_writer(&mut count, value).ok()?;
    Some(count.len)
}

/// The report without the fields named, each replaced by its empty form.
fn without(report: &Value, fields: &[&str]) -> Value {
    let Some(map) = report.as_object() else {
        return report.clone();
    };
    let mut kept = Map::new();
    for (name, value) in map {
        let empty = match name.as_str() {
            _ if !fields.contains(&name.as_str()) => value.clone(),
            "output" => Value::String(String::new()),
            "output_base64" => continue,
            _ => Value::Array(Vec::new()),
        };
        kept.insert(name.clone(), empty);
    }
    Value::Object(kept)
}

/// The fields [`shrink`] drops, in order, until a report fits: the
/// values, then what the script wrote (output, logs and the audit trail).
const DROPPED: [&[&str]; 2] = [
    &["values"],
    &["values", "output", "output_base64", "logs", "calls"],
];

/// An eval's report (its JSON) with as little dropped as lets `fits`
/// accept it: first its values, then also what the script wrote; its
/// stats and error are always kept. `None` when even that is refused.
///
/// ```
/// use serde_json::json;
/// let report = json!({"ok": true, "values": ["x".repeat(1000)], "output": "hi\n",
///                     "stats": {"instructions": 3}});
/// let fits = |r: &serde_json::Value| r.to_string().len() <= 200;
/// let kept = moonbox_service::reply::shrink(&report, fits).unwrap();
/// assert_eq!(kept["values"], json!([]));
/// assert_eq!(kept["output"], "hi\n");
/// ```
pub fn shrink(report: &Value, mut fits: impl FnMut(&Value) -> bool) -> Option<Value> {
    DROPPED
        .iter()
        .map(|fields| without(report, fields))
        .find(|kept| fits(kept))
}

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

/// A part of a [`Budget`], taken by [`Budget::reserve`] for an answer not
/// yet encoded, and given back when dropped.
#[derive(Debug)]
pub struct Reserved {
    _place: OwnedSemaphorePermit,
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

    /// Takes `bytes` of the budget now, for an answer that another layer
    /// will send (see [`Pending`]); `None` when the budget does not have
    /// room. A small answer needs no part of it and always gets one.
    pub fn reserve(&self, bytes: usize) -> Option<Reserved> {
        let units = if bytes <= SMALL_REPLY_BYTES {
            0
        } else {
            u32::try_from(bytes.div_ceil(UNIT)).unwrap_or(u32::MAX)
        };
        let place = self.units.clone().try_acquire_many_owned(units).ok()?;
        Some(Reserved { _place: place })
    }
}

/// The parts of a [`Budget`] that the answers to one request hold, for a
/// server whose answers are encoded by a layer it does not own (the MCP
/// transport's event stream): the handler that makes an answer takes its
/// part with [`Pending::reserve`], and [`Pending::hold_frames`] wraps the
/// response body so that each large frame carries one part until it has
/// been written (or the connection is gone).
///
/// A cheap handle; clones share the parts. Put one in the request's
/// extensions; parts never claimed by a frame are given back when the
/// last clone is dropped.
#[derive(Clone, Debug)]
pub struct Pending {
    budget: Budget,
    parts: Arc<Mutex<Vec<Reserved>>>,
}

impl Pending {
    /// Parts of `budget` for one request's answers.
    pub fn new(budget: Budget) -> Pending {
        Pending {
            budget,
            parts: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// Takes `bytes` of the budget for an answer this request will send;
    /// `false` when the budget does not have room now.
    pub fn reserve(&self, bytes: usize) -> bool {
        if bytes <= SMALL_REPLY_BYTES {
            return true;
        }
        match self.budget.reserve(bytes) {
            Some(part) => {
                self.parts
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(part);
                true
            }
            None => false,
        }
    }

    /// `body`, whose frames over [`SMALL_REPLY_BYTES`] each carry one
    /// reserved part until hyper has written them.
    pub fn hold_frames(self, body: Body) -> Body {
        Body::new(Frames {
            inner: body,
            pending: self,
        })
    }

    fn take(&self) -> Option<Reserved> {
        self.parts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
    }
}

/// A frame's bytes with the part of the budget they hold.
struct Carried {
    bytes: Bytes,
    _part: Reserved,
}

impl AsRef<[u8]> for Carried {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

/// A body whose large frames carry parts of the budget; see
/// [`Pending::hold_frames`].
struct Frames {
    inner: Body,
    pending: Pending,
}

impl http_body::Body for Frames {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        let this = std::pin::Pin::into_inner(self);
        let polled = std::pin::Pin::new(&mut this.inner).poll_frame(cx);
        polled.map(|frame| {
            frame.map(|frame| {
                frame.map(|frame| {
                    frame.map_data(|bytes| {
                        if bytes.len() <= SMALL_REPLY_BYTES {
                            return bytes;
                        }
                        match this.pending.take() {
                            Some(part) => Bytes::from_owner(Carried { bytes, _part: part }),
                            None => bytes,
                        }
                    })
                })
            })
        })
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt;
    use serde_json::json;

    use super::*;

    fn report(value: &str, output: &str) -> Value {
        json!({"ok": true, "values": [value], "output": output, "logs": ["a log"],
               "stats": {"instructions": 3}})
    }

    #[test]
    fn shrink_drops_the_values_first_and_what_the_script_wrote_last() {
        let big_value = report(&"x".repeat(5000), "printed\n");
        let fits = |r: &Value| within(r, 1000).is_some();
        let kept = shrink(&big_value, fits).unwrap();
        assert_eq!(kept["values"], json!([]));
        assert_eq!(kept["output"], "printed\n");
        assert_eq!(kept["logs"], json!(["a log"]));

        let big_output = report(&"x".repeat(5000), &"y".repeat(5000));
        let kept = shrink(&big_output, fits).unwrap();
        assert_eq!(kept["output"], "");
        assert_eq!(kept["logs"], json!([]));
        assert_eq!(kept["stats"]["instructions"], 3);

        assert!(shrink(&big_output, |r| within(r, 10).is_some()).is_none());
    }

    #[test]
    fn the_bounds_are_checked_with_messages_that_name_them() {
        assert!(check(DEFAULT_MAX_REPLY_BYTES, DEFAULT_REPLY_MEMORY).is_ok());
        let small = check(1000, DEFAULT_REPLY_MEMORY).unwrap_err();
        assert!(small.0.contains("max_reply_bytes is 1000"), "{small}");
        let memory = check(1 << 20, (1 << 20) - 1).unwrap_err();
        assert!(memory.0.contains("reply_memory"), "{memory}");
    }

    #[tokio::test]
    async fn a_large_frame_holds_its_part_of_the_budget_until_it_is_dropped() {
        let budget = Budget::new(1 << 20);
        let pending = Pending::new(budget.clone());
        assert!(pending.reserve(800 << 10));
        // Reserved: a second answer of that size does not fit.
        assert!(!Pending::new(budget.clone()).reserve(800 << 10));
        // Small answers need no part.
        assert!(Pending::new(budget.clone()).reserve(SMALL_REPLY_BYTES));

        let mut body = pending.hold_frames(Body::from(vec![b'x'; 800 << 10]));
        let frame = body.frame().await.unwrap().unwrap().into_data().unwrap();
        assert_eq!(frame.len(), 800 << 10);
        drop(body);
        // The body is gone; its frame, still unwritten, holds the part.
        assert!(!Pending::new(budget.clone()).reserve(800 << 10));
        drop(frame);
        assert!(Pending::new(budget.clone()).reserve(800 << 10));
    }

    #[test]
    fn parts_no_frame_claimed_are_given_back_with_the_request() {
        let budget = Budget::new(1 << 20);
        let pending = Pending::new(budget.clone());
        assert!(pending.reserve(800 << 10));
        drop(pending);
        assert!(budget.reserve(800 << 10).is_some());
    }
}
