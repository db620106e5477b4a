//! The worker: answers the eval and session subjects from the bus with
//! the service's operations.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_nats::{Client, Message, Subscriber};
use bytes::Bytes;
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::sync::{Semaphore, watch};
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;

use crate::error::{ApiError, Error};
use crate::nats::{NatsConfig, refused};
use crate::service::{Arrival, Caller, Server};
use axum::http::StatusCode;

/// Messages handled at once past the server's running and queued bounds:
/// enough to answer refusals and session closes while evals wait.
const SPARE_HANDLERS: usize = 64;

/// A NATS worker: attach it to a server with
/// [`Bound::nats`](crate::Bound::nats).
///
/// Its id, 64 random bits in hex, names its own subjects (claimed evals
/// and opens, and its sessions) and starts the id of every session it
/// opens.
pub struct Worker {
    client: Client,
    prefix: String,
    id: String,
    claims: Mutex<Claims>,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("prefix", &self.prefix)
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// Where a message came from; the value indexes the subscriptions, in
/// the order [`Worker::start`] makes them.
#[derive(Clone, Copy)]
enum Source {
    Eval,
    Open,
    Claim,
    Own,
}

/// What a message asks for.
enum Op {
    Eval(Arrival),
    Open,
    SessionEval(String),
    SessionClose(String),
    Unknown,
}

/// How long a granted claim holds a worker back from leaving: a client
/// sends its request within [`CLAIM_USE_WITHIN`](super::CLAIM_USE_WITHIN)
/// of asking for the claim, so the rest is room for the request to travel.
pub(crate) const CLAIM_TTL: Duration = Duration::from_secs(10);

/// How long a draining worker waits for NATS to take an unsubscribe or a
/// flush: past it the bus is taken as gone.
const BUS_WAIT: Duration = Duration::from_secs(2);

/// How long the subscriptions a draining worker leaves must be quiet
/// before it takes them as ended.
const LEAVE_GRACE: Duration = Duration::from_millis(250);

/// The claims a worker granted and has not yet seen used. A claim's id is
/// 64 random bits, so that nobody can use up another client's claim by
/// guessing it. Every claim lives [`CLAIM_TTL`], so claims expire in the
/// order they were granted: pruning and the next expiry take the oldest
/// first, whatever the number outstanding.
///
/// A client (told apart by its reply subject, less the last token: the
/// inbox its NATS connection receives replies on) holds at most a quarter
/// of the claims outstanding, so that one that asks for claims and never
/// uses them cannot take them all.
#[derive(Default)]
struct Claims {
    /// Claim -> when it expires, and its client.
    open: HashMap<String, (Instant, String)>,
    /// Claims in the order granted, with their expiry; a claim used
    /// already is skipped when it reaches the front.
    order: VecDeque<(Instant, String)>,
    /// Claims outstanding by client.
    by_client: HashMap<String, usize>,
}

/// Why a claim was refused.
#[derive(Debug, PartialEq, Eq)]
enum NoClaim {
    /// `max` claims are outstanding.
    Full,
    /// The client holds its share, this many.
    Client(usize),
}

impl Claims {
    fn prune(&mut self, now: Instant) {
        while let Some((expires, id)) = self.order.front() {
            if *expires > now && self.open.contains_key(id) {
                break;
            }
            if *expires <= now {
                let id = id.clone();
                self.forget(&id);
            }
            self.order.pop_front();
        }
    }

    /// Removes claim `id`, returning when it expires.
    fn forget(&mut self, id: &str) -> Option<Instant> {
        let (expires, client) = self.open.remove(id)?;
        if let Some(n) = self.by_client.get_mut(&client) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.by_client.remove(&client);
            }
        }
        Some(expires)
    }

    /// Records the claim `id` of `client`, or refuses it with `max` claims
    /// outstanding, or a quarter of them held by `client`.
    fn grant(&mut self, id: &str, client: &str, now: Instant, max: usize) -> Result<(), NoClaim> {
        self.prune(now);
        if self.open.len() >= max {
            return Err(NoClaim::Full);
        }
        let share = (max / 4).max(1);
        let held = self.by_client.get(client).copied().unwrap_or(0);
        if held >= share {
            return Err(NoClaim::Client(share));
        }
        let expires = now + CLAIM_TTL;
        self.open
            .insert(id.to_owned(), (expires, client.to_owned()));
        *self.by_client.entry(client.to_owned()).or_default() += 1;
        self.order.push_back((expires, id.to_owned()));
        Ok(())
    }

    /// Whether `id` is a claim granted here and not yet used or expired;
    /// it is used up either way.
    fn redeem(&mut self, id: &str, now: Instant) -> bool {
        self.forget(id).is_some_and(|expires| expires > now)
    }

    /// When the next claim expires, if any is outstanding (after
    /// [`Claims::prune`], the oldest is at the front).
    fn next_expiry(&self) -> Option<Instant> {
        self.order.front().map(|(expires, _)| *expires)
    }
}

impl Worker {
    /// A worker on `client`, with the prefix of `config`.
    ///
    /// # Errors
    /// [`Error::Config`] for a bad prefix; [`Error::Nats`] when no random
    /// id can be made.
    pub fn new(client: Client, config: &NatsConfig) -> Result<Worker, Error> {
        config.validate()?;
        let id = crate::hex::random::<8>()
            .map_err(|e| Error::Nats(format!("no random bytes for a worker id: {e}")))?;
        Ok(Worker {
            client,
            prefix: config.prefix.clone(),
            id,
            claims: Mutex::new(Claims::default()),
        })
    }

    /// The worker's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    fn claims(&self) -> MutexGuard<'_, Claims> {
        self.claims.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Subscribes, then answers messages on a task until `draining`. Then
    /// it leaves the queue group (answering what was already delivered,
    /// with `draining` refusals for new work), keeps answering its own
    /// subjects while its handlers run and the claims it granted may still
    /// be used, and ends.
    pub(crate) async fn start(
        self,
        server: Server,
        draining: watch::Receiver<bool>,
    ) -> Result<JoinHandle<()>, Error> {
        let p = &self.prefix;
        let group = format!("{p}.workers");
        let subscribe_error = |e: async_nats::SubscribeError| {
            Error::Nats(format!(
                "cannot subscribe to NATS subjects under '{p}': {e}"
            ))
        };
        let mut subscriptions = Vec::with_capacity(4);
        for subject in ["eval", "sessions.open", "claim"] {
            subscriptions.push(
                self.client
                    .queue_subscribe(format!("{p}.{subject}"), group.clone())
                    .await
                    .map_err(subscribe_error)?,
            );
        }
        subscriptions.push(
            self.client
                .subscribe(format!("{p}.worker.{}.>", self.id))
                .await
                .map_err(subscribe_error)?,
        );
        // The subscriptions are live on the server before the worker says
        // it is ready.
        self.client
            .flush()
            .await
            .map_err(|e| Error::Nats(format!("cannot reach NATS: {e}")))?;
        tracing::info!(worker = %self.id, prefix = %p, "nats worker subscribed");
        let config = server.config();
        let handlers = config
            .max_running
            .saturating_add(config.max_queued)
            .saturating_add(SPARE_HANDLERS);
        let [evals, opens, claims, own]: [Subscriber; 4] = subscriptions
            .try_into()
            .map_err(|_| Error::Nats("the worker's subscriptions are missing".to_owned()))?;
        let worker = Arc::new(self);
        Ok(tokio::spawn(worker.serve(
            server,
            draining,
            [evals, opens, claims, own],
            handlers,
        )))
    }

    async fn serve(
        self: Arc<Self>,
        server: Server,
        mut draining: watch::Receiver<bool>,
        [mut evals, mut opens, mut claim_requests, mut own]: [Subscriber; 4],
        handlers: usize,
    ) {
        // Completes when the server drains (or is gone).
        let drain = async move {
            let _ = draining.wait_for(|d| *d).await.map(drop);
        };
        tokio::pin!(drain);
        let places = Arc::new(Semaphore::new(handlers));
        let mut tasks = JoinSet::new();
        let mut drained = false;
        let mut open = [true; 4];
        let mut leaving = false;
        // While draining, when a message last arrived. The NATS client ends
        // a drained subscription only at its connection's next traffic, so
        // a drained subscription counts as ended once the worker has
        // waited LEAVE_GRACE for it with nothing to read. (A message the
        // server sent before it took the unsubscribe, arriving after the
        // client ended the subscription, is dropped by the client: on the
        // queue subjects that is a claim, which its client asks again, or
        // a request without one; docs/serve.md says so.)
        let mut last_heard = Instant::now();
        loop {
            while tasks.try_join_next().is_some() {}
            if drained && !leaving && !open[..3].contains(&true) && tasks.is_empty() {
                let outstanding = {
                    let mut granted = self.claims();
                    granted.prune(Instant::now());
                    granted.next_expiry().is_some()
                };
                if !outstanding {
                    // Nothing runs, and no claim granted can still be used:
                    // leave the worker's own subjects too, answering what
                    // was already delivered on them.
                    leaving = true;
                    let _ = tokio::time::timeout(BUS_WAIT, own.drain()).await;
                    last_heard = Instant::now();
                }
            }
            if !open.contains(&true) {
                break;
            }
            // While draining, wake to end the subscriptions being drained
            // once nothing came for LEAVE_GRACE, and when the next claim
            // expires (expired ones are dropped first).
            let settling = (drained && open[..3].contains(&true)) || (leaving && open[3]);
            let settled = settling.then(|| last_heard + LEAVE_GRACE);
            let expiry = if drained && !leaving {
                let mut granted = self.claims();
                granted.prune(Instant::now());
                granted.next_expiry()
            } else {
                None
            };
            let (message, source) = tokio::select! {
                // Messages first, so that one waiting is read before the
                // quiet that would end its subscription; the drain before
                // them, so that steady traffic cannot hold it off.
                biased;
                () = &mut drain, if !drained => {
                    drained = true;
                    if !self.on_bus() {
                        // Off the bus, nothing more arrives on any subject
                        // and no claim can be used: finish what runs.
                        tracing::info!(worker = %self.id, "nats worker draining, off the bus: finishing what runs");
                        open.fill(false);
                        continue;
                    }
                    tracing::info!(worker = %self.id, "nats worker draining");
                    // Leave the queue group, keeping what was already
                    // delivered; the worker's own subjects stay for the
                    // claims granted and the sessions' closes.
                    for sub in [&mut evals, &mut opens, &mut claim_requests] {
                        let _ = tokio::time::timeout(BUS_WAIT, sub.drain()).await;
                    }
                    last_heard = Instant::now();
                    continue;
                }
                m = evals.next(), if open[0] => (m, Source::Eval),
                m = opens.next(), if open[1] => (m, Source::Open),
                m = claim_requests.next(), if open[2] => (m, Source::Claim),
                m = own.next(), if open[3] => (m, Source::Own),
                Some(_) = tasks.join_next(), if !tasks.is_empty() => continue,
                () = tokio::time::sleep_until(settled.unwrap_or_else(Instant::now)),
                    if settled.is_some() => {
                    // Nothing to read for LEAVE_GRACE: the subscriptions
                    // being drained have ended.
                    if leaving {
                        open[3] = false;
                    } else {
                        open[..3].fill(false);
                    }
                    continue;
                }
                () = tokio::time::sleep_until(expiry.unwrap_or_else(Instant::now)),
                    if expiry.is_some() => continue,
            };
            if drained {
                last_heard = Instant::now();
            }
            let Some(message) = message else {
                open[source as usize] = false;
                continue;
            };
            let Some(reply) = message.reply.clone() else {
                // Not a request: nobody to answer.
                continue;
            };
            let op = match source {
                Source::Claim => {
                    // The client's inbox: its reply subject less the
                    // request's own token.
                    let client = reply
                        .rsplit_once('.')
                        .map_or(reply.as_str(), |(inbox, _)| inbox);
                    let answer = self.claim(&server, client, drained, handlers);
                    self.publish(&server, reply, answer).await;
                    continue;
                }
                Source::Eval => Op::Eval(Arrival::New),
                Source::Open => Op::Open,
                Source::Own => self.route(&message),
            };
            match places.clone().try_acquire_owned() {
                Ok(place) => {
                    let worker = self.clone();
                    let server = server.clone();
                    tasks.spawn(async move {
                        let answer = worker.handle(&server, op, &message).await;
                        worker.publish(&server, reply, answer).await;
                        drop(place);
                    });
                }
                Err(_) => {
                    let e = ApiError::new(
                        StatusCode::TOO_MANY_REQUESTS,
                        "overloaded",
                        "the worker is handling as many messages as it may; try again later",
                    )
                    .retry_after(Duration::from_secs(1));
                    server.count_refused(&e);
                    self.publish(&server, reply, refused(&e)).await;
                }
            }
        }
        while tasks.join_next().await.is_some() {}
        // The last answers out, unless the bus is gone.
        let _ = tokio::time::timeout(BUS_WAIT, self.client.flush()).await;
        tracing::info!(worker = %self.id, "nats worker stopped");
    }

    /// Whether the worker is connected to NATS now.
    fn on_bus(&self) -> bool {
        matches!(
            self.client.connection_state(),
            async_nats::connection::State::Connected
        )
    }

    /// The answer to a claim: this worker's id and a claim to send one
    /// eval or session open to its own subjects, or a refusal.
    fn claim(&self, server: &Server, client: &str, drained: bool, max: usize) -> Value {
        let e = if drained || server.is_draining() {
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "draining",
                "the worker is stopping; claim another",
            )
        } else {
            match crate::hex::random::<8>() {
                Ok(claim) => match self.claims().grant(&claim, client, Instant::now(), max) {
                    Ok(()) => {
                        return json!({
                            "worker": self.id,
                            "claim": claim,
                            "ttl_ms": u64::try_from(CLAIM_TTL.as_millis()).unwrap_or(u64::MAX),
                        });
                    }
                    Err(NoClaim::Full) => ApiError::new(
                        StatusCode::TOO_MANY_REQUESTS,
                        "overloaded",
                        "the worker has granted as many claims as it may; claim another",
                    )
                    .retry_after(Duration::from_secs(1)),
                    Err(NoClaim::Client(n)) => ApiError::new(
                        StatusCode::TOO_MANY_REQUESTS,
                        "overloaded",
                        format!(
                            "this client holds {n} claims of this worker not yet used, its share; use or let them expire"
                        ),
                    )
                    .retry_after(Duration::from_secs(1)),
                },
                Err(e) => ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    format!("no random bytes for a claim: {e}"),
                ),
            }
        };
        server.count_refused(&e);
        refused(&e)
    }

    /// What a message on the worker's own subjects asks for:
    /// `P.worker.W.(eval|open)` with a claim, or
    /// `P.worker.W.session.S.(eval|close)`.
    fn route(&self, message: &Message) -> Op {
        let tail = message
            .subject
            .strip_prefix(&format!("{}.worker.{}.", self.prefix, self.id))
            .unwrap_or("");
        route(tail, || {
            message
                .headers
                .as_ref()
                .and_then(|headers| headers.get(super::CLAIM_HEADER))
                .is_some_and(|claim| self.claims().redeem(claim.as_str(), Instant::now()))
        })
    }

    /// The answer to one message.
    async fn handle(&self, server: &Server, op: Op, message: &Message) -> Value {
        answer(server, &self.id, op, &message.subject, &message.payload).await
    }

    /// Sends an answer; one larger than the bus carries becomes the
    /// refusal `reply_too_large` with the report minus its values, so that
    /// the client never waits for nothing and learns what the eval wrote
    /// and cost.
    async fn publish(&self, server: &Server, reply: async_nats::Subject, answer: Value) {
        let max = self.client.server_info().max_payload;
        let bytes = encode(server, &answer, max);
        if let Err(e) = self.client.publish(reply, Bytes::from(bytes)).await {
            tracing::warn!(worker = %self.id, error = %e, "cannot send an answer");
        }
    }
}

/// What a message asks for, from its subject's `tail` after
/// `P.worker.W.`; `claimed` redeems the message's claim, if it has one.
fn route(tail: &str, mut claimed: impl FnMut() -> bool) -> Op {
    // A claim redeemed for an eval runs it even while the worker drains. A
    // session opened then could run nothing (its evals are new work), so an
    // open is refused while draining, claim or not, and its client claims
    // another worker.
    match tail {
        "eval" if claimed() => Op::Eval(Arrival::Claimed),
        "eval" => Op::Eval(Arrival::New),
        "open" => {
            // Redeemed, so that the claim no longer holds the worker back.
            claimed();
            Op::Open
        }
        _ => match tail
            .strip_prefix("session.")
            .and_then(|t| t.split_once('.'))
        {
            Some((id, "eval")) => Op::SessionEval(id.to_owned()),
            Some((id, "close")) => Op::SessionClose(id.to_owned()),
            _ => Op::Unknown,
        },
    }
}

/// The answer of `server` to one message for `op`, on `subject`, from the
/// worker `worker`.
async fn answer(server: &Server, worker: &str, op: Op, subject: &str, body: &[u8]) -> Value {
    let anyone = Caller(None);
    let result = match op {
        Op::Eval(arrival) => server.eval("nats", &anyone, arrival, body).await,
        Op::Open => server.open(&anyone, body).await.map(|opened| {
            let id = format!("{worker}.{}", opened.id);
            opened.to_json(&id)
        }),
        Op::SessionEval(id) => server.eval_in("nats", &anyone, &id, body).await,
        Op::SessionClose(id) => server.close(&anyone, &id).map(|()| json!({"closed": true})),
        Op::Unknown => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!(
                "no operation on subject '{}'; a worker takes .eval and .open, and a session .eval and .close",
                subject.chars().take(200).collect::<String>()
            ),
        )),
    };
    result.unwrap_or_else(|e| {
        server.count_refused(&e);
        refused(&e)
    })
}

/// `answer` as the bytes of a message of at most `max_payload`: past it,
/// the refusal `reply_too_large` with the report minus its values, so that
/// the client never waits for nothing and learns what the eval wrote and
/// cost.
fn encode(server: &Server, answer: &Value, max_payload: usize) -> Vec<u8> {
    // A refusal is a few bytes longer on the bus than over HTTP (its
    // status is a field): leave it room.
    match crate::reply::encode(
        answer,
        max_payload.saturating_sub(64),
        "the NATS server's max_payload",
    ) {
        Ok(bytes) => bytes,
        Err(e) => {
            server.count_refused(&e);
            refused(&e).to_string().into_bytes()
        }
    }
}

/// What a worker of `server` answers a message on the subject whose tail
/// (after `P.worker.W.`) is `tail`, carrying `payload` and no claim, as
/// the bytes it would publish within `max_payload`. For fuzz targets of
/// the worker's message handling; not part of the API.
#[doc(hidden)]
pub async fn answer_message(
    server: &Server,
    tail: &str,
    payload: &[u8],
    max_payload: usize,
) -> Vec<u8> {
    let op = route(tail, || false);
    let answer = answer(server, "worker", op, tail, payload).await;
    encode(server, &answer, max_payload)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_is_used_once_within_its_time_and_claims_are_bounded() {
        let mut claims = Claims::default();
        let now = Instant::now();
        assert_eq!(claims.grant("a", "x", now, 2), Ok(()));
        assert_eq!(claims.grant("b", "y", now, 2), Ok(()));
        assert_eq!(claims.grant("c", "z", now, 2), Err(NoClaim::Full));
        assert!(claims.redeem("a", now));
        assert!(!claims.redeem("a", now), "used once");
        assert!(!claims.redeem("z", now), "never granted");
        assert_eq!(claims.next_expiry(), Some(now + CLAIM_TTL));
        // An expired claim runs nothing, and frees its place.
        let later = now + CLAIM_TTL;
        assert!(!claims.redeem("b", later));
        assert_eq!(claims.grant("c", "z", later, 2), Ok(()));
        claims.prune(later + CLAIM_TTL);
        assert!(claims.open.is_empty());
        assert!(claims.by_client.is_empty());
        assert!(!claims.redeem("c", later + CLAIM_TTL));
    }

    #[test]
    fn one_client_holds_at_most_a_quarter_of_the_claims() {
        let mut claims = Claims::default();
        let now = Instant::now();
        for i in 0..4 {
            assert_eq!(claims.grant(&format!("g{i}"), "greedy", now, 16), Ok(()));
        }
        assert_eq!(
            claims.grant("g4", "greedy", now, 16),
            Err(NoClaim::Client(4))
        );
        // Others still get theirs, and a used claim gives its client room.
        assert_eq!(claims.grant("h0", "honest", now, 16), Ok(()));
        assert!(claims.redeem("g0", now));
        assert_eq!(claims.grant("g4", "greedy", now, 16), Ok(()));
    }
}
