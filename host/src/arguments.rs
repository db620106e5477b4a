//! Capability arguments from the guest, parsed into JSON values within a
//! memory budget.
//!
//! A table argument crosses as JSON text, which the guest can build far
//! larger than the Lua heap it came from (shared subtables are written out
//! once per reference), and a JSON value tree takes many times its text:
//! `[{"":0},...]` is about a hundred bytes of tree per byte of text. So the
//! text is parsed against a pool that holds [`Limits::max_memory_bytes`]
//! (the Lua heap's limit) per session: every call in flight charges its
//! parsed arguments to it, by the estimate in [`ArgumentPool`]'s rules, and
//! gives the charge back when the call ends. A call whose arguments would
//! pass what is left fails with a capability error before the tree grows
//! past it.
//!
//! [`Limits::max_memory_bytes`]: crate::Limits::max_memory_bytes

use std::cell::Cell;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::bindings::types::Value as WitValue;

/// Bytes charged for each value of a tree: the value itself (32 bytes) and
/// the slot its array may hold spare after growing by doubling.
const VALUE_BYTES: usize = 64;
/// Bytes charged for each object: the first node of its B-tree (eleven
/// key and value slots), allocated with the first member.
const OBJECT_BYTES: usize = 640;
/// Bytes charged for each member of an object, on top of its value and its
/// key's text: the key's string and its share of the B-tree's nodes.
const MEMBER_BYTES: usize = 64;

/// The memory a session's capability calls may hold in parsed arguments at
/// once; a cheap handle, shared by the calls in flight.
#[derive(Clone, Debug)]
pub(crate) struct ArgumentPool {
    left: Arc<AtomicUsize>,
    capacity: usize,
}

/// A charge against an [`ArgumentPool`], given back when dropped.
#[derive(Debug)]
pub(crate) struct Held {
    left: Arc<AtomicUsize>,
    bytes: usize,
}

impl Held {
    /// The bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.left.fetch_add(self.bytes, Ordering::AcqRel);
    }
}

/// Why arguments were not parsed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ArgumentError {
    /// The text is not JSON (a guest that broke the contract).
    #[error("malformed arguments from the guest ({0})")]
    Malformed(serde_json::Error),
    /// The parsed arguments would pass what the pool has left.
    #[error(
        "the arguments would take more than {left} bytes of host memory once parsed \
         (the calls in flight share {capacity} bytes, max-memory-bytes); pass less data"
    )]
    TooLarge { left: usize, capacity: usize },
}

impl ArgumentPool {
    /// A pool of `capacity` bytes.
    pub(crate) fn new(capacity: u64) -> Self {
        let capacity = usize::try_from(capacity).unwrap_or(usize::MAX);
        ArgumentPool {
            left: Arc::new(AtomicUsize::new(capacity)),
            capacity,
        }
    }

    /// An empty charge against this pool.
    fn nothing(&self) -> Held {
        Held {
            left: self.left.clone(),
            bytes: 0,
        }
    }

    /// Takes `bytes` from the pool into `held`; false when fewer are left.
    fn charge(&self, held: &mut Held, bytes: usize) -> bool {
        let taken = self
            .left
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |left| {
                left.checked_sub(bytes)
            })
            .is_ok();
        if taken {
            held.bytes += bytes;
        }
        taken
    }

    /// Holds `bytes` more for as long as the result lives (a copy of
    /// arguments already parsed, such as the one an approver receives).
    pub(crate) fn hold(&self, bytes: usize) -> Result<Held, ArgumentError> {
        let mut held = self.nothing();
        if self.charge(&mut held, bytes) {
            Ok(held)
        } else {
            Err(self.too_large())
        }
    }

    fn too_large(&self) -> ArgumentError {
        ArgumentError::TooLarge {
            left: self.left.load(Ordering::Acquire),
            capacity: self.capacity,
        }
    }

    /// Runs `parse` against a fresh budget on this pool: what it charges is
    /// held by the returned [`Held`], and given back at once if it fails.
    fn charged<R>(
        &self,
        parse: impl FnOnce(&Budget<'_>) -> Result<R, ArgumentError>,
    ) -> Result<(R, Held), ArgumentError> {
        let held = Cell::new(self.nothing());
        let budget = Budget {
            pool: self,
            held: &held,
            over: Cell::new(false),
        };
        let parsed = parse(&budget)?;
        Ok((parsed, held.into_inner()))
    }

    /// Parses one call's arguments, charging the pool as the trees grow; the
    /// charge is held until the returned [`Held`] is dropped, and given back
    /// at once when parsing fails.
    pub(crate) fn parse(&self, args: Vec<WitValue>) -> Result<(Vec<Value>, Held), ArgumentError> {
        self.charged(|budget| {
            args.into_iter()
                .map(|arg| {
                    Ok(match arg {
                        WitValue::Nil => Value::Null,
                        WitValue::Boolean(b) => Value::Bool(b),
                        WitValue::Integer(i) => Value::from(i),
                        WitValue::Float(f) => {
                            Number::from_f64(f).map_or(Value::Null, Value::Number)
                        }
                        WitValue::Text(s) => {
                            if !budget.charge(VALUE_BYTES + s.len()) {
                                return Err(self.too_large());
                            }
                            Value::String(s)
                        }
                        WitValue::Json(text) => self.tree(budget, &text)?,
                    })
                })
                .collect()
        })
    }

    /// Parses `text` into a tree charged to `budget`.
    fn tree(&self, budget: &Budget<'_>, text: &str) -> Result<Value, ArgumentError> {
        let mut de = serde_json::Deserializer::from_str(text);
        let parsed = Tree(budget).deserialize(&mut de).and_then(|v| {
            de.end()?;
            Ok(v)
        });
        match parsed {
            Ok(value) => Ok(value),
            Err(_) if budget.over.get() => Err(self.too_large()),
            Err(e) => Err(ArgumentError::Malformed(e)),
        }
    }

    /// Parses one JSON `text` by the same rules, holding its charge until
    /// the returned [`Held`] is dropped; [`ArgumentError::TooLarge`] when the
    /// tree would pass what the pool has left.
    pub(crate) fn parse_text(&self, text: &str) -> Result<(Value, Held), ArgumentError> {
        self.charged(|budget| self.tree(budget, text))
    }

    /// Parses the JSON array `text` (an eval's returned values) by the same
    /// rules, so that the tree never passes what the pool holds; the charge
    /// is given back when this returns, since the values then belong to the
    /// caller.
    pub(crate) fn parse_list(&self, text: &str) -> Result<Vec<Value>, ArgumentError> {
        match self.parse_text(text)?.0 {
            Value::Array(values) => Ok(values),
            other => Ok(vec![other]),
        }
    }
}

/// One parse's charges: taken from the pool into `held`.
struct Budget<'a> {
    pool: &'a ArgumentPool,
    held: &'a Cell<Held>,
    /// Set when a charge found the pool short.
    over: Cell<bool>,
}

impl Budget<'_> {
    /// Charges `bytes`; false (and `over` set) when the pool is short.
    fn charge(&self, bytes: usize) -> bool {
        let mut held = self.held.replace(self.pool.nothing());
        let taken = self.pool.charge(&mut held, bytes);
        // The empty `Held` put in its place gives back nothing when dropped.
        drop(self.held.replace(held));
        if !taken {
            self.over.set(true);
        }
        taken
    }

    fn charge_or_fail<E: de::Error>(&self, bytes: usize) -> Result<(), E> {
        if self.charge(bytes) {
            Ok(())
        } else {
            Err(E::custom("past the memory budget for arguments"))
        }
    }
}

/// A JSON value parsed within a [`Budget`]: each value is charged before it
/// is built, so the tree never holds more than the budget allowed.
struct Tree<'a, 'b>(&'a Budget<'b>);

impl<'de> DeserializeSeed<'de> for Tree<'_, '_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        self.0.charge_or_fail(VALUE_BYTES)?;
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Tree<'_, '_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_i64<E: de::Error>(self, i: i64) -> Result<Value, E> {
        Ok(Value::from(i))
    }

    fn visit_u64<E: de::Error>(self, u: u64) -> Result<Value, E> {
        Ok(Value::from(u))
    }

    fn visit_f64<E: de::Error>(self, f: f64) -> Result<Value, E> {
        Ok(Number::from_f64(f).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value, E> {
        self.0.charge_or_fail(s.len())?;
        Ok(Value::String(s.to_owned()))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Value, E> {
        self.0.charge_or_fail(s.len())?;
        Ok(Value::String(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Tree(self.0))? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.0.charge_or_fail(OBJECT_BYTES)?;
        let mut members = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            self.0.charge_or_fail(MEMBER_BYTES + key.len())?;
            let value = map.next_value_seed(Tree(self.0))?;
            members.insert(key, value);
        }
        Ok(Value::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str) -> Vec<WitValue> {
        vec![WitValue::Json(text.to_owned())]
    }

    fn left(pool: &ArgumentPool) -> usize {
        pool.left.load(Ordering::Acquire)
    }

    /// A blocking handler runs on after the eval gives up on it (a batch
    /// whose replies overflowed drops its calls): its arguments' charge
    /// stays with it until it ends, so the pool never counts as free what
    /// a background thread still holds.
    #[tokio::test]
    async fn a_blocking_handler_keeps_its_arguments_charge_until_it_ends() {
        use crate::capability::{Capability, CapabilityError};
        use std::sync::{Mutex, mpsc};
        use std::time::Duration;

        let pool = ArgumentPool::new(1 << 20);
        let (values, held) = pool.parse(json("[1, 2, 3]")).unwrap();
        let charged = held.bytes();
        assert!(charged > 0);
        let (release, wait) = mpsc::channel::<()>();
        let wait = Mutex::new(wait);
        let cap = Capability::<()>::blocking("t.wait", move |_, (_,): (Vec<i64>,)| {
            let _ = wait.lock().unwrap().recv();
            Ok::<_, CapabilityError>(true)
        });
        let values = cap.prepare(values).unwrap();
        let ctx = Arc::new(());
        let run = cap.run(&ctx, values, 1 << 20, held);
        assert!(
            tokio::time::timeout(Duration::from_millis(50), run)
                .await
                .is_err(),
            "the handler is still waiting"
        );
        assert_eq!(
            left(&pool),
            (1 << 20) - charged,
            "still held in the background"
        );
        release.send(()).unwrap();
        for _ in 0..500 {
            if left(&pool) == 1 << 20 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(left(&pool), 1 << 20, "given back when the handler ended");
    }

    #[test]
    fn arguments_within_the_pool_parse_and_hold_their_charge_until_dropped() {
        let pool = ArgumentPool::new(1 << 20);
        let (values, held) = pool
            .parse(vec![
                WitValue::Integer(7),
                WitValue::Text("id".into()),
                WitValue::Json(r#"{"a": [1, 2.5, "x"], "b": null}"#.into()),
            ])
            .expect("parses");
        assert_eq!(
            values,
            [
                serde_json::json!(7),
                serde_json::json!("id"),
                serde_json::json!({"a": [1, 2.5, "x"], "b": null})
            ]
        );
        let left = pool.left.load(Ordering::Acquire);
        assert!(left < 1 << 20, "the tree is charged");
        drop(held);
        assert_eq!(pool.left.load(Ordering::Acquire), 1 << 20, "and given back");
    }

    /// The shape that takes the most tree per byte of text: one-member
    /// objects. A tenth of the pool in text is refused, and the failed
    /// parse gives its charge back.
    #[test]
    fn a_tree_past_the_pool_is_refused_while_it_grows() {
        let pool = ArgumentPool::new(1 << 20);
        let text = format!("[{}]", vec![r#"{"":0}"#; 20_000].join(","));
        assert!(text.len() < 160 << 10);
        let err = pool.parse(json(&text)).expect_err("past the pool");
        assert!(matches!(err, ArgumentError::TooLarge { .. }), "{err}");
        assert!(err.to_string().contains("max-memory-bytes"), "{err}");
        assert_eq!(pool.left.load(Ordering::Acquire), 1 << 20);
    }

    #[test]
    fn calls_in_flight_share_the_pool() {
        let pool = ArgumentPool::new(40 << 10);
        let text = format!("[{}]", vec!["[]"; 400].join(","));
        let (_, first) = pool.parse(json(&text)).expect("the first fits");
        let second = pool.parse(json(&text));
        assert!(matches!(second, Err(ArgumentError::TooLarge { .. })));
        drop(first);
        pool.parse(json(&text))
            .expect("fits again once the first call ended");
    }

    #[test]
    fn text_that_is_not_json_is_malformed_not_too_large() {
        let pool = ArgumentPool::new(1 << 20);
        for bad in ["[1,", "{\"a\"}", "[] []"] {
            let err = pool.parse(json(bad)).expect_err(bad);
            assert!(matches!(err, ArgumentError::Malformed(_)), "{bad}: {err}");
        }
        assert_eq!(pool.left.load(Ordering::Acquire), 1 << 20);
    }

    #[test]
    fn a_copy_is_held_against_the_same_pool() {
        let pool = ArgumentPool::new(1000);
        let a = pool.hold(600).expect("fits");
        assert!(pool.hold(600).is_err());
        drop(a);
        pool.hold(600).expect("fits again");
    }
}
