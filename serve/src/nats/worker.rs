//! The worker: answers the eval and session subjects from the bus with
//! the service's operations.

use std::sync::Arc;

use async_nats::{Client, Message, Subscriber};
use bytes::Bytes;
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::sync::{Semaphore, watch};
use tokio::task::{JoinHandle, JoinSet};

use crate::error::{ApiError, Error};
use crate::nats::{NatsConfig, refused};
use crate::service::{Caller, Server};
use axum::http::StatusCode;

/// Messages handled at once past the server's running and queued bounds:
/// enough to answer refusals and session closes while evals wait.
const SPARE_HANDLERS: usize = 64;

/// A NATS worker: attach it to a server with
/// [`Bound::nats`](crate::Bound::nats).
///
/// Its id, 64 random bits in hex, names its session subjects and starts
/// the id of every session it opens.
pub struct Worker {
    client: Client,
    prefix: String,
    id: String,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("prefix", &self.prefix)
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// What a message asks for.
enum Op {
    Eval,
    Open,
    Session,
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
        })
    }

    /// The worker's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Subscribes, then answers messages on a task until `draining`, when
    /// it drains its subscriptions (messages already delivered are
    /// answered, with `draining` refusals for new work), waits for its
    /// handlers and ends.
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
        let evals = self
            .client
            .queue_subscribe(format!("{p}.eval"), group.clone())
            .await
            .map_err(subscribe_error)?;
        let opens = self
            .client
            .queue_subscribe(format!("{p}.sessions.open"), group)
            .await
            .map_err(subscribe_error)?;
        let sessions = self
            .client
            .subscribe(format!("{p}.worker.{}.>", self.id))
            .await
            .map_err(subscribe_error)?;
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
        let worker = Arc::new(self);
        Ok(tokio::spawn(worker.serve(
            server,
            draining,
            [evals, opens, sessions],
            Arc::new(Semaphore::new(handlers)),
        )))
    }

    async fn serve(
        self: Arc<Self>,
        server: Server,
        mut draining: watch::Receiver<bool>,
        [mut evals, mut opens, mut sessions]: [Subscriber; 3],
        handlers: Arc<Semaphore>,
    ) {
        // Completes when the server drains (or is gone).
        let drain = async move {
            let _ = draining.wait_for(|d| *d).await.map(drop);
        };
        tokio::pin!(drain);
        let mut tasks = JoinSet::new();
        let mut drained = false;
        let mut open = [true; 3];
        while open.iter().any(|o| *o) {
            let (message, op) = tokio::select! {
                () = &mut drain, if !drained => {
                    drained = true;
                    tracing::info!(worker = %self.id, "nats worker draining");
                    // Unsubscribe, keeping what was already delivered.
                    for sub in [&mut evals, &mut opens, &mut sessions] {
                        let _ = sub.drain().await;
                    }
                    continue;
                }
                m = evals.next(), if open[0] => (m, Op::Eval),
                m = opens.next(), if open[1] => (m, Op::Open),
                m = sessions.next(), if open[2] => (m, Op::Session),
            };
            let Some(message) = message else {
                open[match op {
                    Op::Eval => 0,
                    Op::Open => 1,
                    Op::Session => 2,
                }] = false;
                continue;
            };
            while tasks.try_join_next().is_some() {}
            let Some(reply) = message.reply.clone() else {
                // Not a request: nobody to answer.
                continue;
            };
            match handlers.clone().try_acquire_owned() {
                Ok(permit) => {
                    let worker = self.clone();
                    let server = server.clone();
                    tasks.spawn(async move {
                        let answer = worker.handle(&server, op, &message).await;
                        worker.publish(&server, reply, answer).await;
                        drop(permit);
                    });
                }
                Err(_) => {
                    let e = ApiError::new(
                        StatusCode::TOO_MANY_REQUESTS,
                        "overloaded",
                        "the worker is handling as many messages as it may; try again later",
                    )
                    .retry_after(std::time::Duration::from_secs(1));
                    server.count_refused(&e);
                    self.publish(&server, reply, refused(&e)).await;
                }
            }
        }
        while tasks.join_next().await.is_some() {}
        let _ = self.client.flush().await;
        tracing::info!(worker = %self.id, "nats worker stopped");
    }

    /// The answer to one message.
    async fn handle(&self, server: &Server, op: Op, message: &Message) -> Value {
        let anyone = Caller(None);
        let result = match op {
            Op::Eval => server.eval("nats", &anyone, &message.payload).await,
            Op::Open => server.open(&anyone, &message.payload).await.map(|opened| {
                let id = format!("{}.{}", self.id, opened.id);
                opened.to_json(&id)
            }),
            Op::Session => {
                // P.worker.W.session.S.(eval|close)
                let tail = message
                    .subject
                    .strip_prefix(&format!("{}.worker.{}.session.", self.prefix, self.id))
                    .unwrap_or("");
                match tail.split_once('.') {
                    Some((id, "eval")) => {
                        server.eval_in("nats", &anyone, id, &message.payload).await
                    }
                    Some((id, "close")) => {
                        server.close(&anyone, id).map(|()| json!({"closed": true}))
                    }
                    _ => Err(ApiError::new(
                        StatusCode::NOT_FOUND,
                        "not_found",
                        format!(
                            "no operation on subject '{}'; a session takes .eval and .close",
                            message.subject.chars().take(200).collect::<String>()
                        ),
                    )),
                }
            }
        };
        result.unwrap_or_else(|e| {
            server.count_refused(&e);
            refused(&e)
        })
    }

    /// Sends an answer; one larger than the bus carries becomes a refusal
    /// that says so, so that the client never waits for nothing.
    async fn publish(&self, server: &Server, reply: async_nats::Subject, answer: Value) {
        let mut bytes = Bytes::from(answer.to_string());
        let max = self.client.server_info().max_payload;
        if bytes.len() > max {
            let e = ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "reply_too_large",
                format!(
                    "the answer is {} bytes, more than the NATS server's max_payload ({max}); lower max_output_bytes or raise max_payload",
                    bytes.len()
                ),
            );
            server.count_refused(&e);
            bytes = Bytes::from(refused(&e).to_string());
        }
        if let Err(e) = self.client.publish(reply, bytes).await {
            tracing::warn!(worker = %self.id, error = %e, "cannot send an answer");
        }
    }
}
