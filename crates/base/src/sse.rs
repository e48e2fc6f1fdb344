//! An incremental Server-Sent Events parser, per the HTML standard's
//! event-stream interpretation rules. Feed it bytes as they arrive, in
//! chunks of any size; it yields complete events. Model providers and MCP
//! servers both stream over SSE, and both use this.

/// One dispatched event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field; empty means the default type, "message".
    pub event: String,
    pub data: String,
    /// The last `id:` seen, which a client resumes from.
    pub id: Option<String>,
    /// A `retry:` value in milliseconds.
    pub retry: Option<u64>,
}

impl SseEvent {
    pub fn event_type(&self) -> &str {
        if self.event.is_empty() {
            "message"
        } else {
            &self.event
        }
    }
}

/// The parser's state between chunks.
#[derive(Debug, Default)]
pub struct SseParser {
    /// Bytes not yet forming a complete line.
    pending: Vec<u8>,
    /// Whether the previous chunk ended in '\r', so a leading '\n' in the
    /// next chunk belongs to the same line ending.
    after_cr: bool,
    started: bool,
    event: String,
    data: String,
    has_data: bool,
    last_id: Option<String>,
    retry: Option<u64>,
    /// Total bytes held in `pending` and `data`, bounded by `max_event_bytes`.
    max_event_bytes: usize,
}

/// A stream that broke the limits.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    #[error("an event in the stream is larger than {0} bytes")]
    EventTooLarge(usize),
}

impl SseParser {
    /// Events above 16 MiB are refused, so a broken stream cannot eat memory.
    pub const DEFAULT_MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

    pub fn new() -> Self {
        Self::with_limit(Self::DEFAULT_MAX_EVENT_BYTES)
    }

    pub fn with_limit(max_event_bytes: usize) -> Self {
        Self {
            max_event_bytes,
            ..Self::default()
        }
    }

    /// The id a reconnecting client should send as `Last-Event-ID`.
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// Feeds a chunk and returns the events it completed.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        let mut out = Vec::new();
        let mut rest = chunk;
        if self.after_cr {
            self.after_cr = false;
            if let Some(b'\n') = rest.first() {
                rest = &rest[1..];
            }
        }
        while let Some(pos) = rest.iter().position(|b| *b == b'\n' || *b == b'\r') {
            let ending = rest[pos];
            self.pending.extend_from_slice(&rest[..pos]);
            rest = &rest[pos + 1..];
            if ending == b'\r' {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
            let line = std::mem::take(&mut self.pending);
            if let Some(event) = self.line(&line) {
                out.push(event);
            }
            // Held to the limit line by line: one large chunk must not
            // build an event past it either.
            if self.data.len() > self.max_event_bytes {
                self.reset_event();
                return Err(SseError::EventTooLarge(self.max_event_bytes));
            }
        }
        self.pending.extend_from_slice(rest);
        if self.pending.len() + self.data.len() > self.max_event_bytes {
            self.pending.clear();
            self.reset_event();
            return Err(SseError::EventTooLarge(self.max_event_bytes));
        }
        Ok(out)
    }

    /// Ends the stream. Per the standard, an event without its closing blank
    /// line is dropped; this says whether one was, so callers can report a
    /// truncated stream.
    pub fn finish(&mut self) -> bool {
        let truncated = self.has_data || !self.pending.is_empty();
        self.pending.clear();
        self.reset_event();
        truncated
    }

    fn reset_event(&mut self) {
        self.event.clear();
        self.data.clear();
        self.has_data = false;
        self.retry = None;
    }

    fn line(&mut self, raw: &[u8]) -> Option<SseEvent> {
        let mut raw = raw;
        if !self.started {
            self.started = true;
            if let Some(stripped) = raw.strip_prefix(b"\xEF\xBB\xBF") {
                raw = stripped;
            }
        }
        let line = String::from_utf8_lossy(raw);
        if line.is_empty() {
            if !self.has_data {
                self.event.clear();
                return None;
            }
            let mut data = std::mem::take(&mut self.data);
            if data.ends_with('\n') {
                data.pop();
            }
            let event = SseEvent {
                event: std::mem::take(&mut self.event),
                data,
                id: self.last_id.clone(),
                retry: self.retry.take(),
            };
            self.has_data = false;
            return Some(event);
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.find(':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (&line[..], ""),
        };
        match field {
            "event" => self.event = value.to_string(),
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
                self.has_data = true;
            }
            "id" if !value.contains('\0') => self.last_id = Some(value.to_string()),
            "retry" => {
                if let Ok(ms) = value.parse() {
                    self.retry = Some(ms);
                }
            }
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_in_chunks(input: &[u8], size: usize) -> Vec<SseEvent> {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        for chunk in input.chunks(size.max(1)) {
            out.extend(p.feed(chunk).unwrap());
        }
        out
    }

    fn ev(event: &str, data: &str, id: Option<&str>) -> SseEvent {
        SseEvent {
            event: event.into(),
            data: data.into(),
            id: id.map(Into::into),
            retry: None,
        }
    }

    #[test]
    fn the_same_events_whatever_the_chunking() {
        let stream = "\u{feff}: comment\r\nevent: delta\r\ndata: {\"a\":1}\r\n\r\ndata: line1\ndata:line2\nid: 7\n\ndata: é😀\r\r: tail\n\n";
        let want = vec![
            ev("delta", "{\"a\":1}", None),
            ev("", "line1\nline2", Some("7")),
            ev("", "é😀", Some("7")),
        ];
        for size in 1..=stream.len() {
            assert_eq!(
                parse_in_chunks(stream.as_bytes(), size),
                want,
                "chunk size {size}"
            );
        }
    }

    #[test]
    fn fields_per_the_standard() {
        let mut p = SseParser::new();
        let events = p
            .feed(b"retry: 1500\nevent: x\ndata\n\nevent: ignored\n\nid: a\0b\ndata: y\nunknown: z\n\n")
            .unwrap();
        assert_eq!(
            events,
            vec![
                SseEvent {
                    event: "x".into(),
                    data: "".into(),
                    id: None,
                    retry: Some(1500)
                },
                ev("", "y", None),
            ]
        );
        assert_eq!(events[1].event_type(), "message");
    }

    #[test]
    fn a_truncated_stream_is_reported() {
        let mut p = SseParser::new();
        assert_eq!(p.feed(b"data: whole\n\ndata: half").unwrap().len(), 1);
        assert!(p.finish());
        let mut q = SseParser::new();
        q.feed(b"data: whole\n\n").unwrap();
        assert!(!q.finish());
    }

    #[test]
    fn oversized_events_are_refused() {
        let mut p = SseParser::with_limit(10);
        assert_eq!(
            p.feed(b"data: 0123456789abc"),
            Err(SseError::EventTooLarge(10))
        );
        // The parser recovers for the next event.
        assert_eq!(
            p.feed(b"\n\ndata: ok\n\n").unwrap(),
            vec![ev("", "ok", None)]
        );
    }

    #[test]
    fn an_event_past_the_limit_is_refused_even_inside_one_chunk() {
        let mut p = SseParser::with_limit(10);
        assert_eq!(
            p.feed(b"data: 12345\ndata: 67890\ndata: abc\n\n"),
            Err(SseError::EventTooLarge(10))
        );
        assert_eq!(p.feed(b"data: ok\n\n").unwrap(), vec![ev("", "ok", None)]);
    }

    #[test]
    fn last_event_id_survives_for_resumption() {
        let mut p = SseParser::new();
        p.feed(b"id: 41\ndata: a\n\nid: 42\ndata: b\n\n").unwrap();
        assert_eq!(p.last_event_id(), Some("42"));
    }
}
