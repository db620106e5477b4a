//! [`Prepared`]: what a sandbox shares with every session it starts: the
//! engine, the linked guest ready to instantiate, the capabilities and the
//! configuration the guest receives.

use std::sync::Arc;

use crate::bindings::{GuestPre, types};
use crate::config::Determinism;
use crate::engine::Engine;
use crate::host::{HostState, Registry};
use crate::limits::Limits;

/// The shared, immutable half of a sandbox. Sessions hold it by `Arc`.
pub(crate) struct Prepared<T: 'static> {
    pub(crate) engine: Engine,
    pub(crate) pre: GuestPre<HostState<T>>,
    pub(crate) registry: Arc<Registry<T>>,
    pub(crate) limits: Limits,
    pub(crate) config: types::Config,
    pub(crate) determinism: Option<Determinism>,
    /// `catalog.search` and `catalog.describe` are among the capabilities.
    pub(crate) discovery: bool,
}
