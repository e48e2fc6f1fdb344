//! Change notifications: `subscriptions/listen` (modern) or the GET
//! stream plus `resources/subscribe` (legacy), reconnected after an
//! abrupt close.

use serde_json::{Map, json};

use crate::error::McpError;
use crate::jsonrpc::{self, Message, RequestId};
use crate::model::SubscriptionFilter;
use crate::stream::MessageReader;
use crate::version::Era;

use super::wire::{DEFAULT_RETRY_MS, MAX_RESUMES, http_error};
use super::{CallOptions, McpClient, ServerEvent};

impl McpClient {
    /// Opens the stream of change notifications: `subscriptions/listen`
    /// (modern) or the GET stream plus `resources/subscribe` (legacy).
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<Subscription, McpError> {
        self.ensure_connected().await?;
        let mut sub = Subscription {
            client: self.clone(),
            filter,
            reader: None,
            listen_id: None,
            last_event_id: None,
            failures: 0,
            finished: false,
        };
        if self.era() == Era::Legacy {
            for uri in sub
                .filter
                .resource_subscriptions
                .clone()
                .unwrap_or_default()
            {
                let mut params = Map::new();
                params.insert("uri".into(), uri.into());
                self.request("resources/subscribe", params, CallOptions::default())
                    .await?;
            }
        }
        sub.open().await?;
        Ok(sub)
    }
}

/// A stream of change notifications. It reconnects by itself after an
/// abrupt close (resuming with `Last-Event-ID` on legacy servers) and ends
/// when the server closes it gracefully.
pub struct Subscription {
    client: McpClient,
    filter: SubscriptionFilter,
    reader: Option<MessageReader>,
    listen_id: Option<RequestId>,
    last_event_id: Option<String>,
    failures: u32,
    finished: bool,
}

impl Subscription {
    async fn open(&mut self) -> Result<(), McpError> {
        let c = &self.client;
        let response = match c.era() {
            Era::Modern => {
                let version = c.version();
                let id = c.next_id();
                let mut params = Map::new();
                params.insert(
                    "notifications".into(),
                    serde_json::to_value(&self.filter).unwrap_or(json!({})),
                );
                let wire = c.modern_params(&version, params);
                let body = jsonrpc::request(&id, "subscriptions/listen", Some(wire.clone()));
                let req = c.post_request(
                    Era::Modern,
                    &version,
                    "subscriptions/listen",
                    &wire,
                    &body,
                    None,
                );
                self.listen_id = Some(id);
                c.send_authorized(req).await?
            }
            Era::Legacy => {
                let response = c.open_get_stream(self.last_event_id.as_deref()).await?;
                if response.status == 404 && c.session_id().is_some() {
                    let info = c.initialize(&c.version()).await?;
                    c.inner.state.borrow_mut().info = Some(info);
                    c.open_get_stream(None).await?
                } else {
                    response
                }
            }
        };
        if !(200..300).contains(&response.status) {
            return Err(http_error(response).await);
        }
        if response.media_type() != "text/event-stream" {
            // A JSON answer to a listen request is its end (or an error).
            let mut reader = MessageReader::new(response);
            while let Some(m) = reader.next().await {
                if let Ok(Message::Error { error, .. }) = m {
                    return Err(McpError::Rpc(error));
                }
            }
            self.finished = true;
            return Ok(());
        }
        self.reader = Some(MessageReader::new(response));
        Ok(())
    }

    /// The next notification, or `None` once the subscription has ended.
    pub async fn next(&mut self) -> Option<Result<ServerEvent, McpError>> {
        loop {
            if self.finished {
                return None;
            }
            let Some(reader) = self.reader.as_mut() else {
                if let Err(e) = self.reconnect().await {
                    self.finished = true;
                    return Some(Err(e));
                }
                continue;
            };
            match reader.next().await {
                Some(Ok(Message::Notification { method, params })) => {
                    if let Some(id) = reader.last_event_id() {
                        self.last_event_id = Some(id.to_string());
                    }
                    self.failures = 0;
                    return Some(Ok(ServerEvent::from_notification(&method, params)));
                }
                Some(Ok(Message::Request { id, method, params })) => {
                    self.client.answer_server_request(id, &method, params).await;
                }
                Some(Ok(Message::Result { id, .. })) if Some(&id) == self.listen_id.as_ref() => {
                    self.finished = true;
                    return None;
                }
                Some(Ok(Message::Error { error, .. })) => {
                    self.finished = true;
                    return Some(Err(McpError::Rpc(error)));
                }
                Some(Ok(Message::Result { .. })) => {}
                Some(Err(e)) => return Some(Err(e)),
                None => {
                    if let Some(id) = reader.last_event_id() {
                        self.last_event_id = Some(id.to_string());
                    }
                    let wait = reader.retry_ms().unwrap_or(DEFAULT_RETRY_MS);
                    self.reader = None;
                    self.failures += 1;
                    if self.failures > MAX_RESUMES {
                        self.finished = true;
                        return Some(Err(McpError::Protocol(
                            "the notification stream keeps breaking".into(),
                        )));
                    }
                    self.client.inner.transport.sleep(wait).await;
                }
            }
        }
    }

    async fn reconnect(&mut self) -> Result<(), McpError> {
        self.open().await
    }

    /// Stops listening; dropping the subscription does the same.
    pub fn close(self) {}
}
