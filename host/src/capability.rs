//! Capabilities: typed Rust functions that Lua calls by a dotted name.

use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::arguments::Held;

/// An error a capability returns to the script.
///
/// It becomes an ordinary Lua error, prefixed with the caller's position and
/// the capability's name (`main.lua:3: records.get: not allowed`), which the
/// script can catch with `pcall`. Keep it free of secrets: the script, and
/// the model behind it, read it.
///
/// ```
/// use moonbox::CapabilityError;
/// let err = CapabilityError::new("record 7 is archived");
/// assert_eq!(err.to_string(), "record 7 is archived");
/// let err: CapabilityError = "quota exceeded".into();
/// assert_eq!(err.message(), "quota exceeded");
/// // An ordinary error: it boxes, and `?` converts it.
/// let boxed: Box<dyn std::error::Error + Send + Sync> = err.into();
/// assert_eq!(boxed.to_string(), "quota exceeded");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CapabilityError {
    message: String,
    /// The arguments did not match the signature: no handler code ran
    /// (the audit records `invalid_args`).
    invalid_args: bool,
}

impl CapabilityError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        CapabilityError {
            message: message.into(),
            invalid_args: false,
        }
    }

    /// Arguments that do not match the capability's signature.
    pub(crate) fn invalid_args(message: impl Into<String>) -> Self {
        CapabilityError {
            message: message.into(),
            invalid_args: true,
        }
    }

    /// How the audit records a call that ended with this error:
    /// `invalid_args` when the arguments did not match the signature
    /// (checked against its schemas, or converted for a typed handler), so
    /// that no handler code, nor the upstream behind it, saw them; else
    /// `error`.
    pub(crate) fn outcome(&self) -> crate::CallOutcome {
        if self.invalid_args {
            crate::CallOutcome::InvalidArgs
        } else {
            crate::CallOutcome::Error
        }
    }

    /// The message the script sees (after the capability's name).
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for CapabilityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CapabilityError {}

impl From<String> for CapabilityError {
    fn from(message: String) -> Self {
        CapabilityError::new(message)
    }
}

impl From<&str> for CapabilityError {
    fn from(message: &str) -> Self {
        CapabilityError::new(message)
    }
}

/// Argument lists a capability can take: tuples of up to six
/// `DeserializeOwned` types, each converted from one Lua argument.
///
/// Trailing arguments whose type accepts JSON `null` (such as `Option<T>`)
/// are optional in Lua. A conversion failure names the argument:
/// ``weather.today: argument #1 must be a string (got integer `42`)``.
pub trait Args: Sized + Send + 'static {
    /// The most arguments the tuple takes.
    const MAX_ARGS: u32;
    /// The fewest: `MAX_ARGS` minus trailing arguments that accept `null`.
    fn min_args() -> u32;
    /// Converts JSON arguments (already padded with `null` to `MAX_ARGS`).
    fn from_values(values: Vec<Value>) -> Result<Self, CapabilityError>;
}

fn accepts_null<T: DeserializeOwned>() -> bool {
    serde_json::from_value::<T>(Value::Null).is_ok()
}

/// Converts one argument, turning serde's message into one a model can act on.
/// A float with no fraction (Lua's `3.0`) is accepted where an integer is
/// expected, as Lua's own library accepts it.
fn argument<T: DeserializeOwned>(position: u32, value: Value) -> Result<T, CapabilityError> {
    let first = match T::deserialize(&value) {
        Ok(v) => return Ok(v),
        Err(e) => e,
    };
    let (value, changed) = integral(value);
    let result = if changed {
        serde_json::from_value(value)
    } else {
        Err(first)
    };
    result.map_err(|e| {
        let text = e.to_string();
        let message = match text
            .strip_prefix("invalid type: ")
            .and_then(|rest| rest.split_once(", expected "))
        {
            Some((got, expected)) => format!("argument #{position} must be {expected} (got {got})"),
            None => format!("argument #{position}: {text}"),
        };
        CapabilityError::invalid_args(message)
    })
}

/// The value with every float that has no fraction and fits in an `i64`
/// made an integer; and whether anything changed.
fn integral(value: Value) -> (Value, bool) {
    match value {
        Value::Number(n) if !n.is_i64() && !n.is_u64() => match n.as_f64() {
            // The bounds are exact in f64; the cast is exact inside them.
            Some(f) if f.fract() == 0.0 && (i64::MIN as f64..-(i64::MIN as f64)).contains(&f) => {
                (Value::from(f as i64), true)
            }
            _ => (Value::Number(n), false),
        },
        Value::Array(items) => {
            let mut changed = false;
            let items = items
                .into_iter()
                .map(|v| {
                    let (v, c) = integral(v);
                    changed |= c;
                    v
                })
                .collect();
            (Value::Array(items), changed)
        }
        Value::Object(members) => {
            let mut changed = false;
            let members = members
                .into_iter()
                .map(|(k, v)| {
                    let (v, c) = integral(v);
                    changed |= c;
                    (k, v)
                })
                .collect();
            (Value::Object(members), changed)
        }
        other => (other, false),
    }
}

/// [`Limits::MAX_CAPABILITY_ARGS`](crate::Limits::MAX_CAPABILITY_ARGS), for this module.
pub(crate) const MAX_CAPABILITY_ARGS: u32 = crate::limits::Limits::MAX_CAPABILITY_ARGS;

/// The arguments as JSON values, for a capability whose arity is known only
/// at run time (a binding for another language, a proxy): 0 to 16 unless
/// [`Capability::with_arity`] says otherwise. Missing arguments up to the
/// most the capability takes arrive as `null`.
///
/// ```
/// use moonbox::{Capability, CapabilityError};
/// use serde_json::Value;
///
/// let count = Capability::<()>::sync("args.count", |_ctx, args: Vec<Value>| {
///     Ok::<_, CapabilityError>(args.iter().filter(|v| !v.is_null()).count())
/// })
/// .with_arity(1, 3);
/// assert_eq!(count.arity(), (1, 3));
/// ```
impl Args for Vec<Value> {
    const MAX_ARGS: u32 = 16;
    fn min_args() -> u32 {
        0
    }
    fn from_values(values: Vec<Value>) -> Result<Self, CapabilityError> {
        Ok(values)
    }
}

impl Args for () {
    const MAX_ARGS: u32 = 0;
    fn min_args() -> u32 {
        0
    }
    fn from_values(_: Vec<Value>) -> Result<Self, CapabilityError> {
        Ok(())
    }
}

macro_rules! tuple_args {
    ($count:expr; $($name:ident $pos:expr),+) => {
        impl<$($name: DeserializeOwned + Send + 'static),+> Args for ($($name,)+) {
            const MAX_ARGS: u32 = $count;
            fn min_args() -> u32 {
                let optional = [$(accepts_null::<$name>()),+];
                let trailing = optional.iter().rev().take_while(|o| **o).count() as u32;
                $count - trailing
            }
            fn from_values(values: Vec<Value>) -> Result<Self, CapabilityError> {
                let mut values = values.into_iter();
                Ok(($(argument::<$name>($pos, values.next().unwrap_or(Value::Null))?,)+))
            }
        }
    };
}

tuple_args!(1; A 1);
tuple_args!(2; A 1, B 2);
tuple_args!(3; A 1, B 2, C 3);
tuple_args!(4; A 1, B 2, C 3, D 4);
tuple_args!(5; A 1, B 2, C 3, D 4, E 5);
tuple_args!(6; A 1, B 2, C 3, D 4, E 5, F 6);

/// A capability's reply: one JSON value as text, at most the call's byte
/// bound long.
pub(crate) type Reply = Result<String, CapabilityError>;
type BoxFuture = Pin<Box<dyn Future<Output = Reply> + Send>>;
/// A handler: the context, the arguments, and the most bytes of JSON the
/// reply may take.
pub(crate) type SyncFn<T> = dyn Fn(&T, Vec<Value>, usize) -> Reply + Send + Sync;
type AsyncFn<T> = dyn Fn(Arc<T>, Vec<Value>, usize) -> BoxFuture + Send + Sync;

enum Handler<T> {
    /// Runs on the calling task; must not block.
    Inline(Arc<SyncFn<T>>),
    /// Runs on tokio's blocking pool, so the eval timeout can still fire.
    Blocking(Arc<SyncFn<T>>),
    /// An async function.
    Async(Arc<AsyncFn<T>>),
}

impl<T> Clone for Handler<T> {
    fn clone(&self) -> Self {
        match self {
            Handler::Inline(f) => Handler::Inline(f.clone()),
            Handler::Blocking(f) => Handler::Blocking(f.clone()),
            Handler::Async(f) => Handler::Async(f.clone()),
        }
    }
}

/// A host function offered to Lua under a dotted name such as `records.get`.
///
/// `T` is the session context: per-session state such as an API client with
/// credentials. Handlers receive it; scripts never can.
///
/// ```
/// use moonbox::{Capability, CapabilityError};
///
/// struct Ctx { api_key: String }
///
/// // Sync: cheap, must not block. Arguments are a tuple of serde types.
/// let add = Capability::<Ctx>::sync("math2.add", |_ctx, (a, b): (i64, i64)| {
///     Ok::<_, CapabilityError>(a + b)
/// })
/// .with_description("Adds two integers.");
///
/// // Async: may await I/O; the eval's timeout covers it.
/// let whoami = Capability::<Ctx>::new_async("auth.whoami", |ctx, (): ()| async move {
///     Ok::<_, CapabilityError>(format!("key ending {}", &ctx.api_key[ctx.api_key.len() - 2..]))
/// });
/// assert_eq!(add.name(), "math2.add");
/// assert_eq!(add.arity(), (2, 2));
/// assert_eq!(add.description(), "Adds two integers.");
/// # let _ = whoami;
/// ```
pub struct Capability<T> {
    name: String,
    doc: String,
    min_args: u32,
    max_args: u32,
    arg_names: Vec<String>,
    params: Option<Arc<[Value]>>,
    result: Option<Arc<Value>>,
    budget: Option<u32>,
    approval: bool,
    handler: Handler<T>,
}

impl<T> Clone for Capability<T> {
    fn clone(&self) -> Self {
        Capability {
            name: self.name.clone(),
            doc: self.doc.clone(),
            min_args: self.min_args,
            max_args: self.max_args,
            arg_names: self.arg_names.clone(),
            params: self.params.clone(),
            result: self.result.clone(),
            budget: self.budget,
            approval: self.approval,
            handler: self.handler.clone(),
        }
    }
}

impl<T> fmt::Debug for Capability<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Capability")
            .field("name", &self.name)
            .field("doc", &self.doc)
            .field("arity", &(self.min_args, self.max_args))
            .field("typed", &self.params.is_some())
            .field("budget", &self.budget)
            .field("approval", &self.approval)
            .finish_non_exhaustive()
    }
}

impl<T> Capability<T> {
    /// Sets the one-line description shown in tool schemas, which
    /// [`description`](Self::description) reads. Default: none.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.doc = description.into();
        self
    }

    /// The dotted name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The description [`with_description`](Self::with_description) set
    /// (empty when none was).
    pub fn description(&self) -> &str {
        &self.doc
    }

    /// The fewest and most arguments the capability accepts.
    pub fn arity(&self) -> (u32, u32) {
        (self.min_args, self.max_args)
    }

    /// Sets the fewest and most arguments a script may pass, in place of
    /// those the handler's argument type implies: for handlers that take
    /// `Vec<Value>`. A call outside the range is refused before the handler
    /// runs; missing arguments up to `max` arrive as `null`.
    /// [`build`](crate::SandboxBuilder::build) refuses `min > max` and a
    /// `max` over [`Limits::MAX_CAPABILITY_ARGS`](crate::Limits::MAX_CAPABILITY_ARGS).
    pub fn with_arity(mut self, min: u32, max: u32) -> Self {
        self.min_args = min;
        self.max_args = max;
        self
    }

    /// Sets how many times one eval may call this capability, overriding
    /// the sandbox's default ([`SandboxBuilder::call_budget`](crate::SandboxBuilder::call_budget)).
    /// A call past it does not run: the script gets a capability error
    /// (which `pcall` catches) naming the capability and the budget, and
    /// the call is recorded as [`CallOutcome::OverBudget`](crate::CallOutcome::OverBudget).
    /// Calls refused by the approver count too, so a budget also bounds
    /// how often one eval can ask. 0 offers the capability but refuses
    /// every call. At most [`Limits::MAX_CALL_BUDGET`](crate::Limits::MAX_CALL_BUDGET)
    /// ([`build`](crate::SandboxBuilder::build) refuses more). Default:
    /// the sandbox's.
    ///
    /// ```
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use moonbox::{Capability, CapabilityError, Sandbox};
    ///
    /// let send = Capability::sync("mail.send", |_ctx, (to,): (String,)| {
    ///     Ok::<_, CapabilityError>(format!("sent to {to}"))
    /// })
    /// .call_budget(1);
    /// assert_eq!(send.budget(), Some(1));
    /// let sandbox = Sandbox::builder().capability(send).build()?;
    /// let out = sandbox
    ///     .eval("mail.send('a') local ok, err = pcall(mail.send, 'b') return ok, err")
    ///     .await?;
    /// assert_eq!(out.values[0], false);
    /// assert!(out.values[1].as_str().unwrap().contains("at most 1 time"));
    /// # Ok(()) }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
    /// ```
    pub fn call_budget(mut self, calls: u32) -> Self {
        self.budget = Some(calls);
        self
    }

    /// The capability's own call budget per eval, if it sets one.
    pub fn budget(&self) -> Option<u32> {
        self.budget
    }

    /// Holds every call until the sandbox's [`Approver`](crate::Approver)
    /// allows it: a refusal is a capability error with the approver's
    /// reason, and the handler does not run. A sandbox with such a
    /// capability and no approver does not build. Default: calls run
    /// without approval.
    pub fn require_approval(mut self) -> Self {
        self.approval = true;
        self
    }

    /// Whether calls need the approver's consent.
    pub fn needs_approval(&self) -> bool {
        self.approval
    }

    /// Names the arguments for the tool description and for error messages
    /// (`argument #1 (id) must be a string`). Extra names are ignored.
    /// Default: unnamed (`arg1`, `arg2`... in signatures).
    pub fn arg_names<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.arg_names = names.into_iter().map(Into::into).collect();
        self
    }

    /// Declares JSON Schemas: one per argument, in order, and optionally the
    /// result's. Arguments are then checked against them before the handler
    /// runs (a mismatch is a `capability` error naming the argument and the
    /// field, which `pcall` catches), and the tool description shows the
    /// capability as a Lua signature. A missing optional argument (`nil`
    /// past the fewest the capability accepts) is not checked. Schemas past
    /// the most arguments are ignored. Default: none, or those the `*_typed`
    /// constructors derive.
    ///
    /// ```
    /// use moonbox::{Capability, CapabilityError};
    /// use serde_json::{json, Value};
    ///
    /// let search = Capability::<()>::sync("docs.search", |_ctx, (query,): (Value,)| {
    ///     Ok::<_, CapabilityError>(vec![query["text"].clone()])
    /// })
    /// .schemas(
    ///     vec![json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})],
    ///     Some(json!({"type": "array", "items": {"type": "string"}})),
    /// );
    /// assert_eq!(search.signature(), "docs.search{text: string} -> string[]");
    /// ```
    pub fn schemas(mut self, params: Vec<Value>, result: Option<Value>) -> Self {
        self.params = Some(params.into());
        self.result = result.map(Arc::new);
        self
    }

    /// The argument schemas, when the capability is typed.
    pub fn params_schemas(&self) -> Option<&[Value]> {
        self.params.as_deref()
    }

    /// The result schema, when declared.
    pub fn result_schema(&self) -> Option<&Value> {
        self.result.as_deref()
    }

    /// The capability as a Lua signature for a model to read:
    /// `records.get(id: string) -> {name: string, visits: {date: string}[]}`.
    /// A sole argument that is a record is written as Lua's table call,
    /// `github.search_issues{query: string, limit?: integer}`. Untyped
    /// arguments and results are `any`.
    pub fn signature(&self) -> String {
        let params = self.params.as_deref().unwrap_or(&[]);
        let max = self.max_args as usize;
        let mut text = self.name.clone();
        match params {
            [only] if max == 1 && self.arg_names.is_empty() && crate::schema::is_record(only) => {
                text.push_str(&crate::schema::render(only));
            }
            _ => {
                let args: Vec<String> = (0..max)
                    .map(|i| {
                        let name = self
                            .arg_names
                            .get(i)
                            .cloned()
                            .unwrap_or_else(|| format!("arg{}", i + 1));
                        let optional = if i >= self.min_args as usize { "?" } else { "" };
                        let ty = params
                            .get(i)
                            .map_or_else(|| "any".to_owned(), crate::schema::render);
                        format!("{name}{optional}: {ty}")
                    })
                    .collect();
                text.push('(');
                text.push_str(&args.join(", "));
                text.push(')');
            }
        }
        let result = self
            .result
            .as_deref()
            .map_or_else(|| "any".to_owned(), crate::schema::render);
        text.push_str(" -> ");
        text.push_str(&result);
        text
    }

    /// Checks arguments (padded with `null` to the most) against the
    /// declared schemas; the error names the first argument that fails.
    fn check_args(&self, values: &[Value]) -> Result<(), CapabilityError> {
        let Some(params) = self.params.as_deref() else {
            return Ok(());
        };
        let empty = Value::Object(serde_json::Map::new());
        for (i, (schema, value)) in params.iter().zip(values).enumerate() {
            let value = if value.is_null() && i >= self.min_args as usize {
                // A missing optional argument is not checked, unless its
                // schema is an object's: `f()` then stands for `f{}`.
                if !crate::schema::missing_is_empty_table(schema) {
                    continue;
                }
                &empty
            } else {
                value
            };
            if let Err(why) = crate::schema::check(schema, value) {
                let label = match self.arg_names.get(i) {
                    Some(name) => format!("argument #{} ({name})", i + 1),
                    None => format!("argument #{}", i + 1),
                };
                let sep = if why.starts_with('.') { ": " } else { " " };
                return Err(CapabilityError::invalid_args(format!("{label}{sep}{why}")));
            }
        }
        Ok(())
    }
}

/// Argument tuples whose types describe themselves with a JSON Schema
/// (schemars' `JsonSchema`), for the `*_typed` constructors.
pub trait ArgsSchema: Args {
    /// One schema per argument, in order.
    fn schemas() -> Vec<Value>;
}

impl ArgsSchema for () {
    fn schemas() -> Vec<Value> {
        Vec::new()
    }
}

macro_rules! tuple_schemas {
    ($($name:ident),+) => {
        impl<$($name: DeserializeOwned + JsonSchema + Send + 'static),+> ArgsSchema for ($($name,)+) {
            fn schemas() -> Vec<Value> {
                vec![$(schema_of::<$name>()),+]
            }
        }
    };
}

tuple_schemas!(A);
tuple_schemas!(A, B);
tuple_schemas!(A, B, C);
tuple_schemas!(A, B, C, D);
tuple_schemas!(A, B, C, D, E);
tuple_schemas!(A, B, C, D, E, F);

/// The schema schemars derives for `T`, as JSON.
fn schema_of<T: JsonSchema>() -> Value {
    let mut schema = schemars::SchemaGenerator::default()
        .into_root_schema_for::<T>()
        .to_value();
    // The dialect marker and title add nothing to a check or a signature.
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
        object.remove("title");
    }
    schema
}

impl<T: Send + Sync + 'static> Capability<T> {
    /// A capability that runs inline on the eval's task. Use it for cheap,
    /// non-blocking work that finishes in microseconds: it cannot be
    /// abandoned, so a slow handler holds the eval past its timeout and
    /// stalls the runtime thread (use [`Capability::blocking`] or
    /// [`Capability::new_async`] for anything slow).
    pub fn sync<A, R, E, F>(name: impl Into<String>, f: F) -> Self
    where
        A: Args,
        R: Serialize,
        E: Into<CapabilityError>,
        F: Fn(&T, A) -> Result<R, E> + Send + Sync + 'static,
    {
        Self::make(
            name,
            A::min_args(),
            A::MAX_ARGS,
            Handler::Inline(Arc::new(typed_sync(f))),
        )
    }

    /// A capability that may block (file I/O, a blocking client). It runs on
    /// tokio's blocking pool; if it outlives the eval's timeout the eval
    /// ends with [`ErrorKind::Timeout`](crate::ErrorKind::Timeout) at the
    /// deadline and the call is left to finish in the background, its
    /// result dropped.
    pub fn blocking<A, R, E, F>(name: impl Into<String>, f: F) -> Self
    where
        A: Args,
        R: Serialize,
        E: Into<CapabilityError>,
        F: Fn(&T, A) -> Result<R, E> + Send + Sync + 'static,
    {
        Self::make(
            name,
            A::min_args(),
            A::MAX_ARGS,
            Handler::Blocking(Arc::new(typed_sync(f))),
        )
    }

    /// An async capability: `f` returns a future, which runs inside the
    /// eval. The eval's timeout covers the time it spends: at the deadline
    /// its future is dropped and the eval ends with
    /// [`ErrorKind::Timeout`](crate::ErrorKind::Timeout).
    pub fn new_async<A, R, E, F, Fut>(name: impl Into<String>, f: F) -> Self
    where
        A: Args,
        R: Serialize,
        E: Into<CapabilityError>,
        F: Fn(Arc<T>, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, E>> + Send + 'static,
    {
        let f = Arc::new(f);
        let handler = move |ctx: Arc<T>, values: Vec<Value>, max: usize| -> BoxFuture {
            let args = A::from_values(values);
            let f = f.clone();
            Box::pin(async move {
                let result = f(ctx, args?).await.map_err(Into::into)?;
                to_json(&result, max)
            })
        };
        Self::make(
            name,
            A::min_args(),
            A::MAX_ARGS,
            Handler::Async(Arc::new(handler)),
        )
    }

    /// [`Capability::sync`] with JSON Schemas derived from the argument and
    /// result types (schemars' `JsonSchema`): arguments are checked against
    /// them at the boundary, and the tool description shows a signature.
    ///
    /// ```
    /// use moonbox::{Capability, CapabilityError};
    /// use schemars::JsonSchema;
    /// use serde::Serialize;
    ///
    /// #[derive(Serialize, JsonSchema)]
    /// struct Visit { date: String }
    /// #[derive(Serialize, JsonSchema)]
    /// struct Patient { name: String, visits: Vec<Visit> }
    ///
    /// let get = Capability::<()>::sync_typed("records.get", |_ctx, (id,): (String,)| {
    ///     Ok::<_, CapabilityError>(Patient { name: id, visits: vec![] })
    /// })
    /// .arg_names(["id"]);
    /// assert_eq!(
    ///     get.signature(),
    ///     "records.get(id: string) -> {name: string, visits: {date: string}[]}"
    /// );
    /// ```
    pub fn sync_typed<A, R, E, F>(name: impl Into<String>, f: F) -> Self
    where
        A: ArgsSchema,
        R: Serialize + JsonSchema,
        E: Into<CapabilityError>,
        F: Fn(&T, A) -> Result<R, E> + Send + Sync + 'static,
    {
        Self::sync(name, f).schemas(A::schemas(), Some(schema_of::<R>()))
    }

    /// [`Capability::blocking`] with derived schemas, as
    /// [`Capability::sync_typed`].
    pub fn blocking_typed<A, R, E, F>(name: impl Into<String>, f: F) -> Self
    where
        A: ArgsSchema,
        R: Serialize + JsonSchema,
        E: Into<CapabilityError>,
        F: Fn(&T, A) -> Result<R, E> + Send + Sync + 'static,
    {
        Self::blocking(name, f).schemas(A::schemas(), Some(schema_of::<R>()))
    }

    /// [`Capability::new_async`] with derived schemas, as
    /// [`Capability::sync_typed`].
    pub fn new_async_typed<A, R, E, F, Fut>(name: impl Into<String>, f: F) -> Self
    where
        A: ArgsSchema,
        R: Serialize + JsonSchema,
        E: Into<CapabilityError>,
        F: Fn(Arc<T>, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, E>> + Send + 'static,
    {
        Self::new_async(name, f).schemas(A::schemas(), Some(schema_of::<R>()))
    }

    /// A capability whose handler produces JSON text itself, bounded by the
    /// byte limit it is given (used by [`Records`](crate::Records)).
    pub(crate) fn raw(
        name: impl Into<String>,
        min_args: u32,
        max_args: u32,
        handler: Arc<SyncFn<T>>,
    ) -> Self {
        Self::make(name, min_args, max_args, Handler::Inline(handler))
    }

    fn make(name: impl Into<String>, min_args: u32, max_args: u32, handler: Handler<T>) -> Self {
        Capability {
            name: name.into(),
            doc: String::new(),
            min_args,
            max_args,
            arg_names: Vec::new(),
            params: None,
            result: None,
            budget: None,
            approval: false,
            handler,
        }
    }

    /// [`prepare`](Self::prepare), then [`run`](Self::run).
    #[cfg(test)]
    pub(crate) async fn invoke(&self, ctx: &Arc<T>, values: Vec<Value>, max_reply: usize) -> Reply {
        let values = self.prepare(values)?;
        // Arguments made by hand are charged to no session's pool.
        let held = crate::arguments::ArgumentPool::new(0)
            .hold(0)
            .expect("nothing fits in an empty pool");
        self.run(ctx, values, max_reply, held).await
    }

    /// Checks the argument count, pads missing arguments with `null` and
    /// checks the declared schemas: the arguments as the handler (and an
    /// approver) will see them.
    pub(crate) fn prepare(&self, mut values: Vec<Value>) -> Result<Vec<Value>, CapabilityError> {
        let max = self.max_args as usize;
        if values.len() > max {
            return Err(CapabilityError::invalid_args(format!(
                "expected at most {max} arguments, got {}",
                values.len()
            )));
        }
        values.resize(max, Value::Null);
        self.check_args(&values)?;
        Ok(values)
    }

    /// Runs the handler on prepared arguments. Panics become errors; the
    /// host stays up. A reply longer than `max_reply` bytes of JSON is
    /// refused while it is being written, before it is complete.
    ///
    /// `held` (the arguments' charge against the session's pool) lives as
    /// long as the arguments do: a blocking handler keeps running, with its
    /// arguments, after the eval gives up on it, so its charge goes with it
    /// to the blocking thread.
    pub(crate) async fn run(
        &self,
        ctx: &Arc<T>,
        values: Vec<Value>,
        max_reply: usize,
        held: Held,
    ) -> Reply {
        match &self.handler {
            Handler::Inline(f) => {
                let reply = catch_unwind(AssertUnwindSafe(|| f(ctx, values, max_reply)))
                    .unwrap_or_else(|_| Err(panicked()));
                drop(held);
                reply
            }
            Handler::Blocking(f) => {
                let (f, ctx) = (f.clone(), ctx.clone());
                let work = move || {
                    let reply = f(&ctx, values, max_reply);
                    drop(held);
                    reply
                };
                match tokio::task::spawn_blocking(work).await {
                    Ok(reply) => reply,
                    Err(_) => Err(panicked()),
                }
            }
            Handler::Async(f) => {
                let reply = CatchUnwind(f(ctx.clone(), values, max_reply)).await;
                drop(held);
                reply
            }
        }
    }
}

fn panicked() -> CapabilityError {
    CapabilityError::new("the capability failed inside the host (it panicked)")
}

/// Serialises a result to JSON text, stopping as soon as it passes `max`
/// bytes: an oversized reply is refused without being built.
pub(crate) fn to_json<R: Serialize + ?Sized>(result: &R, max: usize) -> Reply {
    let mut out = Bounded {
        bytes: Vec::new(),
        max,
        over: false,
    };
    match serde_json::to_writer(&mut out, result) {
        Ok(()) => String::from_utf8(out.bytes)
            .map_err(|_| CapabilityError::new("the result is not valid UTF-8 JSON")),
        Err(_) if out.over => Err(too_large(max)),
        Err(e) => Err(CapabilityError::new(format!(
            "cannot convert the result to JSON: {e}"
        ))),
    }
}

/// The error for a reply past the byte bound.
pub(crate) fn too_large(max: usize) -> CapabilityError {
    CapabilityError::new(format!(
        "the result is more than {max} bytes of JSON, the sandbox's memory limit; return less data"
    ))
}

/// A writer that refuses to grow past `max` bytes.
struct Bounded {
    bytes: Vec<u8>,
    max: usize,
    over: bool,
}

impl std::io::Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.bytes.len().saturating_add(buf.len()) > self.max {
            self.over = true;
            return Err(std::io::Error::other("the reply is too large"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn typed_sync<T, A, R, E, F>(
    f: F,
) -> impl Fn(&T, Vec<Value>, usize) -> Reply + Send + Sync + 'static
where
    A: Args,
    R: Serialize,
    E: Into<CapabilityError>,
    F: Fn(&T, A) -> Result<R, E> + Send + Sync + 'static,
{
    move |ctx: &T, values: Vec<Value>, max: usize| {
        let args = A::from_values(values)?;
        to_json(&f(ctx, args).map_err(Into::into)?, max)
    }
}

/// Polls a future inside `catch_unwind`, so a panicking async capability is
/// an error and not a dead runtime thread.
struct CatchUnwind(BoxFuture);

impl Future for CatchUnwind {
    type Output = Reply;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Reply> {
        let inner = &mut self.0;
        catch_unwind(AssertUnwindSafe(|| inner.as_mut().poll(cx)))
            .unwrap_or_else(|_| Poll::Ready(Err(panicked())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arity_counts_trailing_optionals() {
        assert_eq!((<(String,)>::min_args(), <(String,)>::MAX_ARGS), (1, 1));
        assert_eq!(
            (
                <(String, Option<u32>)>::min_args(),
                <(String, Option<u32>)>::MAX_ARGS
            ),
            (1, 2)
        );
        assert_eq!(
            (
                <(Option<u32>, String)>::min_args(),
                <(Option<u32>, String)>::MAX_ARGS
            ),
            (2, 2)
        );
        assert_eq!(<()>::min_args(), 0);
    }

    #[test]
    fn type_errors_name_the_argument() {
        let err = <(String,)>::from_values(vec![json!(42)]).unwrap_err();
        assert_eq!(
            err.message(),
            "argument #1 must be a string (got integer `42`)"
        );
        let err = <(String, u8)>::from_values(vec![json!("a"), json!(300)]).unwrap_err();
        assert!(
            err.message().starts_with("argument #2"),
            "{}",
            err.message()
        );
    }

    #[tokio::test]
    async fn panics_become_errors() {
        let cap = Capability::<()>::sync("boom", |_, (): ()| -> Result<(), CapabilityError> {
            panic!("secret")
        });
        let err = cap
            .invoke(&Arc::new(()), vec![], 1 << 20)
            .await
            .unwrap_err();
        assert!(err.message().contains("panicked"));
        assert!(!err.message().contains("secret"));
    }

    #[test]
    fn an_oversized_reply_is_refused_while_it_is_written() {
        let big = vec!["x".repeat(1000); 1000];
        let err = to_json(&big, 10_000).unwrap_err();
        assert!(
            err.message().contains("more than 10000 bytes"),
            "{}",
            err.message()
        );
        assert_eq!(to_json(&json!([1, "a"]), 100).unwrap(), r#"[1,"a"]"#);
    }
}
