//! Reads JSON-RPC messages out of a response body, whether the server chose
//! a single JSON object or an SSE stream, as they arrive. SSE goes through
//! the shared incremental parser in `hearth_base::sse`; empty events (the priming
//! event servers send to hand out an event id) are skipped, and the last
//! event id and `retry` value are kept for resuming.

use std::collections::VecDeque;

use futures::StreamExt;

use super::error::McpError;
use super::jsonrpc::Message;
use super::transport::{BodyStream, HttpResponse, TransportError};
use hearth_base::sse::SseParser;

/// Bodies and events above this size are refused.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

enum Format {
    Json { buffer: Vec<u8> },
    Sse(SseParser),
}

/// How a stream ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamEnd {
    /// The body ended cleanly.
    Closed,
    /// The body ended in the middle of an event, or the connection broke.
    Broken(String),
}

pub struct MessageReader {
    body: BodyStream,
    format: Format,
    pending: VecDeque<Message>,
    ended: Option<StreamEnd>,
    last_event_id: Option<String>,
    retry_ms: Option<u64>,
}

impl MessageReader {
    /// A reader for a response whose media type is JSON or SSE; anything
    /// else is the caller's to reject first.
    pub fn new(response: HttpResponse) -> Self {
        let format = if response.media_type() == "text/event-stream" {
            Format::Sse(SseParser::with_limit(MAX_MESSAGE_BYTES))
        } else {
            Format::Json { buffer: Vec::new() }
        };
        Self {
            body: response.body,
            format,
            pending: VecDeque::new(),
            ended: None,
            last_event_id: None,
            retry_ms: None,
        }
    }

    pub fn is_sse(&self) -> bool {
        matches!(self.format, Format::Sse(_))
    }

    /// The id of the last SSE event received, for `Last-Event-ID`.
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_event_id.as_deref()
    }

    /// The server's latest `retry` value in milliseconds.
    pub fn retry_ms(&self) -> Option<u64> {
        self.retry_ms
    }

    /// How the body ended, once [`next`](Self::next) has returned `None`.
    pub fn end(&self) -> Option<&StreamEnd> {
        self.ended.as_ref()
    }

    /// The next message, or `None` at the end of the body. A message that
    /// cannot be read is an error, but reading may continue after it.
    pub async fn next(&mut self) -> Option<Result<Message, McpError>> {
        loop {
            if let Some(m) = self.pending.pop_front() {
                return Some(Ok(m));
            }
            if self.ended.is_some() {
                return None;
            }
            match self.body.next().await {
                Some(Ok(chunk)) => {
                    if let Err(e) = self.take_chunk(&chunk) {
                        return Some(Err(e));
                    }
                }
                Some(Err(e)) => {
                    let why = match &e {
                        TransportError::Interrupted(m) | TransportError::Unreachable(m) => {
                            m.clone()
                        }
                        other => other.to_string(),
                    };
                    self.ended = Some(StreamEnd::Broken(why));
                }
                None => {
                    let end = self.finish();
                    if let Err(e) = end {
                        return Some(Err(e));
                    }
                }
            }
        }
    }

    fn take_chunk(&mut self, chunk: &[u8]) -> Result<(), McpError> {
        match &mut self.format {
            Format::Json { buffer } => {
                if buffer.len() + chunk.len() > MAX_MESSAGE_BYTES {
                    self.ended = Some(StreamEnd::Broken("response too large".into()));
                    return Err(McpError::Transport(TransportError::TooLarge(
                        MAX_MESSAGE_BYTES,
                    )));
                }
                buffer.extend_from_slice(chunk);
                Ok(())
            }
            Format::Sse(parser) => {
                let events = parser
                    .feed(chunk)
                    .map_err(|e| McpError::Malformed(e.to_string()))?;
                let mut first_error = None;
                for event in events {
                    if event.id.is_some() {
                        self.last_event_id = event.id.clone();
                    }
                    if let Some(ms) = event.retry {
                        self.retry_ms = Some(ms);
                    }
                    if event.event_type() != "message" || event.data.trim().is_empty() {
                        continue;
                    }
                    match Message::parse_all(&event.data) {
                        Ok(messages) => self.pending.extend(messages),
                        Err(e) => {
                            first_error.get_or_insert(McpError::Malformed(e.to_string()));
                        }
                    }
                }
                match first_error {
                    Some(e) => Err(e),
                    None => Ok(()),
                }
            }
        }
    }

    fn finish(&mut self) -> Result<(), McpError> {
        match &mut self.format {
            Format::Json { buffer } => {
                self.ended = Some(StreamEnd::Closed);
                let text = String::from_utf8_lossy(buffer).into_owned();
                buffer.clear();
                if text.trim().is_empty() {
                    return Ok(());
                }
                let messages =
                    Message::parse_all(&text).map_err(|e| McpError::Malformed(e.to_string()))?;
                self.pending.extend(messages);
                Ok(())
            }
            Format::Sse(parser) => {
                let truncated = parser.finish();
                self.ended = Some(if truncated {
                    StreamEnd::Broken("the event stream ended in the middle of an event".into())
                } else {
                    StreamEnd::Closed
                });
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::RequestId;
    use futures::executor::block_on;
    use serde_json::json;

    fn response(content_type: &str, chunks: Vec<Result<Vec<u8>, TransportError>>) -> HttpResponse {
        HttpResponse {
            status: 200,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: futures::stream::iter(chunks).boxed_local(),
        }
    }

    fn drain(reader: &mut MessageReader) -> Vec<Result<Message, String>> {
        block_on(async {
            let mut out = Vec::new();
            while let Some(m) = reader.next().await {
                out.push(m.map_err(|e| e.to_string()));
            }
            out
        })
    }

    #[test]
    fn json_bodies_in_any_chunking() {
        let body = br#"{"jsonrpc":"2.0","id":1,"result":{"ok":true}}"#;
        for size in [1, 3, 7, body.len()] {
            let chunks = body.chunks(size).map(|c| Ok(c.to_vec())).collect();
            let mut r = MessageReader::new(response("application/json; charset=utf-8", chunks));
            assert_eq!(
                drain(&mut r),
                vec![Ok(Message::Result {
                    id: RequestId::Number(1),
                    result: json!({"ok": true})
                })]
            );
            assert_eq!(r.end(), Some(&StreamEnd::Closed));
        }
    }

    #[test]
    fn sse_skips_priming_and_keeps_resume_data() {
        let stream = "id: p1\nretry: 500\ndata: \n\n\
            event: message\nid: e2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n\
            event: ping\ndata: ignored\n\n\
            data: not json\n\n\
            id: e3\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n";
        let chunks = stream
            .as_bytes()
            .chunks(5)
            .map(|c| Ok(c.to_vec()))
            .collect();
        let mut r = MessageReader::new(response("text/event-stream", chunks));
        assert!(r.is_sse());
        let got = drain(&mut r);
        assert_eq!(
            got,
            vec![
                Ok(Message::Notification {
                    method: "notifications/progress".into(),
                    params: json!({"progress": 1})
                }),
                Err("the server sent a malformed answer: the server sent something that is not JSON: expected ident at line 1 column 2".into()),
                Ok(Message::Result {
                    id: RequestId::Number(2),
                    result: json!({})
                }),
            ]
        );
        assert_eq!(r.last_event_id(), Some("e3"));
        assert_eq!(r.retry_ms(), Some(500));
        assert_eq!(r.end(), Some(&StreamEnd::Closed));
    }

    #[test]
    fn broken_and_truncated_streams_are_reported() {
        let mut r = MessageReader::new(response(
            "text/event-stream",
            vec![
                Ok(b"id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n\n".to_vec()),
                Err(TransportError::Interrupted("reset by peer".into())),
            ],
        ));
        assert_eq!(drain(&mut r).len(), 1);
        assert_eq!(r.end(), Some(&StreamEnd::Broken("reset by peer".into())));

        let mut t = MessageReader::new(response(
            "text/event-stream",
            vec![Ok(b"data: {\"jsonrpc\"".to_vec())],
        ));
        assert_eq!(drain(&mut t), vec![]);
        assert_eq!(
            t.end(),
            Some(&StreamEnd::Broken(
                "the event stream ended in the middle of an event".into()
            ))
        );
    }

    #[test]
    fn an_empty_json_body_yields_nothing() {
        let mut r = MessageReader::new(response("application/json", vec![]));
        assert_eq!(drain(&mut r), vec![]);
    }
}
