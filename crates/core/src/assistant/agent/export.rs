//! Conversations as Markdown files people can read anywhere: every
//! message, every tool call with its arguments and result, errors and the
//! skills that were loaded. Nothing the conversation holds is left out
//! except base64 payloads, which are named instead.

use std::fmt::Write as _;

use serde_json::Value;

use super::conversation::{CallState, Conversation, Message, MessageStatus, Role};
use crate::skill::call::{Content, ToolStatus};

/// `unix_ms` as `2026-05-01 14:03 UTC`.
pub fn utc_minute(unix_ms: f64) -> String {
    let minutes = (unix_ms / 60_000.0).floor() as i64;
    let (y, m, d) = crate::util::dates::civil_from_days(minutes.div_euclid(1_440));
    let of_day = minutes.rem_euclid(1_440);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        of_day / 60,
        of_day % 60
    )
}

/// A code fence longer than any run of backticks in `text`, so the text
/// can never close it early.
fn fence_for(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

fn code_block(out: &mut String, lang: &str, text: &str) {
    let fence = fence_for(text);
    let _ = writeln!(
        out,
        "{fence}{lang}\n{}\n{fence}\n",
        text.trim_end_matches('\n')
    );
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "You",
        Role::Assistant => "Assistant",
        Role::Command => "You ran",
    }
}

fn status_note(status: MessageStatus) -> Option<&'static str> {
    match status {
        MessageStatus::Complete => None,
        MessageStatus::Streaming => Some("unfinished"),
        MessageStatus::Error => Some("failed"),
        MessageStatus::Cancelled => Some("stopped"),
    }
}

fn call_state(state: CallState) -> &'static str {
    match state {
        CallState::Waiting => "waiting",
        CallState::Finished => "finished",
        CallState::Refused => "refused",
        CallState::Cancelled => "cancelled",
    }
}

fn tool_status(status: ToolStatus) -> &'static str {
    status.as_str()
}

fn content_part(out: &mut String, part: &Content) {
    match part {
        Content::Text { text } => code_block(out, "text", text),
        Content::Json { value } => code_block(out, "json", &pretty(value)),
        Content::Image { mime_type, data } => {
            let _ = writeln!(
                out,
                "*An image ({mime_type}, {} bytes).*\n",
                data.len() / 4 * 3
            );
        }
        Content::Audio { mime_type, data } => {
            let _ = writeln!(
                out,
                "*Audio ({mime_type}, {} bytes).*\n",
                data.len() / 4 * 3
            );
        }
        Content::ResourceLink { uri, name, .. } => {
            let _ = writeln!(out, "Resource: [{}]({uri})\n", escape_inline(name));
        }
        Content::Resource {
            uri,
            text: Some(text),
            ..
        } => {
            let _ = writeln!(out, "Resource `{uri}`:\n");
            code_block(out, "text", text);
        }
        Content::Resource {
            uri,
            mime_type,
            text: None,
            ..
        } => {
            let _ = writeln!(
                out,
                "*A binary resource {uri} ({}).*\n",
                mime_type.as_deref().unwrap_or("unknown type")
            );
        }
        Content::Artifact {
            name, mime_type, ..
        } => {
            let _ = writeln!(
                out,
                "*A file: {} ({mime_type}); it is kept in Hearth and in backups.*\n",
                escape_inline(name)
            );
        }
    }
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

/// Keeps a name from turning into markup inside a line.
fn escape_inline(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' | '|'
        ) {
            s.push('\\');
        }
        if c == '\n' {
            s.push(' ');
        } else {
            s.push(c);
        }
    }
    s
}

fn message(out: &mut String, m: &Message) {
    let _ = write!(
        out,
        "## {} · {}",
        role_name(m.role),
        utc_minute(m.created_at_ms)
    );
    if let Some(note) = status_note(m.status) {
        let _ = write!(out, " ({note})");
    }
    out.push_str("\n\n");
    if !m.reasoning.trim().is_empty() {
        out.push_str("> **Reasoning**\n>\n");
        for line in m.reasoning.trim_end().lines() {
            let _ = writeln!(out, "> {line}");
        }
        out.push('\n');
    }
    if m.role == Role::Command {
        if !m.content.trim().is_empty() {
            code_block(out, "text", m.content.trim());
        }
    } else if !m.content.trim().is_empty() {
        out.push_str(m.content.trim_end());
        out.push_str("\n\n");
    }
    for call in &m.tool_calls {
        let what = if m.role == Role::Command {
            "Skill"
        } else {
            "Tool call"
        };
        let _ = write!(out, "### {what}: `{}`", call.name.replace('`', "'"));
        match &call.result {
            Some(r) => {
                let _ = write!(
                    out,
                    " — {}, {}",
                    tool_status(r.status),
                    crate::util::display::duration(r.duration_ms)
                );
                if let Some(wait) = crate::util::display::approval_wait(r.wait_ms) {
                    let _ = write!(out, " ({wait})");
                }
            }
            None => {
                let _ = write!(out, " — {}", call_state(call.state));
            }
        }
        out.push_str("\n\n");
        out.push_str("Arguments:\n\n");
        match &call.raw_arguments {
            Some(raw) => code_block(out, "text", raw),
            None => code_block(out, "json", &pretty(&call.arguments)),
        }
        if let Some(r) = &call.result {
            if let Some(error) = &r.error {
                let _ = writeln!(out, "Error: {}\n", escape_inline(error));
            }
            if !r.content.is_empty() {
                out.push_str("Result:\n\n");
                for part in &r.content {
                    content_part(out, part);
                }
            }
        }
        if let Some(note) = &call.note {
            let _ = writeln!(out, "Note: {}\n", escape_inline(note));
        }
    }
    if let Some(e) = &m.error {
        let _ = writeln!(
            out,
            "**Error:** {} {}\n",
            escape_inline(&e.message),
            escape_inline(&e.advice)
        );
    }
}

/// The whole conversation as one Markdown document.
pub fn conversation_markdown(c: &Conversation) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", escape_inline(&c.title));
    let _ = writeln!(
        out,
        "*Exported from Hearth. Started {}, last changed {}, {} message{}.*\n",
        utc_minute(c.created_at_ms),
        utc_minute(c.updated_at_ms),
        c.messages.len(),
        if c.messages.len() == 1 { "" } else { "s" }
    );
    if !c.loaded_skills.is_empty() {
        let names: Vec<String> = c
            .loaded_skills
            .iter()
            .map(|s| format!("`{}`", s.as_str()))
            .collect();
        let _ = writeln!(out, "Skills loaded: {}\n", names.join(", "));
    }
    if let Some(prompt) = &c.settings.system_prompt {
        out.push_str("System prompt:\n\n");
        code_block(&mut out, "text", prompt);
    }
    for m in &c.messages {
        out.push_str("---\n\n");
        message(&mut out, m);
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

/// A file name for the conversation: its title made safe, and its id's
/// start so two conversations with one title do not collide.
pub fn markdown_file_name(c: &Conversation) -> String {
    file_name(c, "md")
}

/// The conversation whole, as Hearth stores it (messages, calls and their
/// results, loaded skills, settings), as indented JSON.
pub fn conversation_json(c: &Conversation) -> String {
    // Serialising our own plain types cannot fail.
    serde_json::to_string_pretty(c).unwrap_or_default()
}

/// A file name for the conversation's JSON export.
pub fn json_file_name(c: &Conversation) -> String {
    file_name(c, "json")
}

fn file_name(c: &Conversation, extension: &str) -> String {
    let mut stem: String = c
        .title
        .chars()
        .map(|ch| {
            if ch.is_alphanumeric() || ch == '-' || ch == '_' {
                ch
            } else {
                ' '
            }
        })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join("-");
    if stem.is_empty() {
        stem = "conversation".into();
    }
    let stem: String = stem.chars().take(60).collect();
    let id: String =
        c.id.chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .take(8)
            .collect();
    if id.is_empty() {
        format!("{stem}.{extension}")
    } else {
        format!("{stem}-{id}.{extension}")
    }
}

/// Several Markdown files in one zip; names that repeat get a number.
pub fn markdown_zip(files: &[(String, String)]) -> Result<Vec<u8>, String> {
    use std::io::Write as _;
    use zip::write::SimpleFileOptions;
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(zip::DateTime::default())
        .unix_permissions(0o644);
    let mut used = std::collections::HashSet::new();
    for (name, text) in files {
        let mut unique = name.clone();
        let mut n = 2;
        while !used.insert(unique.clone()) {
            let stem = name.strip_suffix(".md").unwrap_or(name);
            unique = format!("{stem}-{n}.md");
            n += 1;
        }
        zip.start_file(unique, options).map_err(|e| e.to_string())?;
        zip.write_all(text.as_bytes()).map_err(|e| e.to_string())?;
    }
    Ok(zip.finish().map_err(|e| e.to_string())?.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assistant::agent::conversation::ToolCallRecord;
    use crate::skill::SkillId;
    use crate::skill::call::{CallOrigin, ToolCall, ToolResult};
    use serde_json::json;

    /// 2026-05-01 14:03 UTC.
    const T: f64 = 1_777_644_180_000.0;

    fn conversation() -> Conversation {
        let mut c = Conversation::new("3f2a9c1e-77", T);
        c.title = "What's 15% of 847?".into();
        c.updated_at_ms = T + 60_000.0;
        c.loaded_skills = vec![SkillId::new("calculator").unwrap()];
        let id = c.next_message_id();
        c.messages.push(Message::user(id, "What's 15% of 847?", T));
        let id = c.next_message_id();
        let mut reply = Message::assistant(id, T);
        reply.status = MessageStatus::Complete;
        reply.content = "It is **127.05**. Code: ``` inside ```".into();
        let call = ToolCall {
            id: "call-1".into(),
            skill_id: SkillId::new("calculator").unwrap(),
            arguments: json!({"expression": "15% of 847"}),
            conversation_id: Some(c.id.clone()),
            origin: CallOrigin::Model,
        };
        let mut result = ToolResult::for_call(&call, ToolStatus::Completed);
        result.content = vec![Content::Text {
            text: "127.05".into(),
        }];
        result.duration_ms = 3.2;
        reply.tool_calls = vec![
            ToolCallRecord {
                id: "call-1".into(),
                name: "calculator".into(),
                arguments: json!({"expression": "15% of 847"}),
                raw_arguments: None,
                state: CallState::Finished,
                result: Some(result),
                note: None,
                provider_id: None,
            },
            ToolCallRecord {
                id: "call-2".into(),
                name: "web_fetch".into(),
                arguments: json!({}),
                raw_arguments: Some("{\"url\": ".into()),
                state: CallState::Refused,
                result: None,
                note: Some("the arguments are not valid JSON".into()),
                provider_id: None,
            },
        ];
        c.messages.push(reply);
        c
    }

    #[test]
    fn a_conversation_reads_as_markdown() {
        let expected = "\
# What's 15% of 847?

*Exported from Hearth. Started 2026-05-01 14:03 UTC, last changed 2026-05-01 14:04 UTC, 2 messages.*

Skills loaded: `calculator`

---

## You · 2026-05-01 14:03 UTC

What's 15% of 847?

---

## Assistant · 2026-05-01 14:03 UTC

It is **127.05**. Code: ``` inside ```

### Tool call: `calculator` — completed, 3 ms

Arguments:

```json
{
  \"expression\": \"15% of 847\"
}
```

Result:

```text
127.05
```

### Tool call: `web_fetch` — refused

Arguments:

```text
{\"url\": 
```

Note: the arguments are not valid JSON
";
        assert_eq!(conversation_markdown(&conversation()), expected);
    }

    #[test]
    fn fences_outgrow_the_text_they_hold() {
        let cases = [
            ("plain", "```"),
            ("one ` tick", "```"),
            ("```rust\nfn x() {}\n```", "````"),
            ("a ````` run", "``````"),
        ];
        for (text, fence) in cases {
            assert_eq!(fence_for(text), fence, "{text}");
        }
    }

    #[test]
    fn errors_and_stops_are_shown() {
        let mut c = Conversation::new("x", 0.0);
        let id = c.next_message_id();
        let mut m = Message::assistant(id, 0.0);
        m.status = MessageStatus::Error;
        m.content = "partial".into();
        m.error = Some(crate::assistant::providers::ProviderError {
            kind: crate::assistant::providers::ErrorKind::Network,
            status: None,
            message: "Cannot reach Ollama.".into(),
            advice: "Start it, then try again.".into(),
            retry: crate::assistant::providers::Retry::Backoff,
            detail: None,
        });
        c.messages.push(m);
        let md = conversation_markdown(&c);
        assert!(
            md.ends_with(
                "## Assistant · 1970-01-01 00:00 UTC (failed)\n\npartial\n\n**Error:** Cannot reach Ollama. Start it, then try again.\n"
            ),
            "{md}"
        );
    }

    #[test]
    fn file_names_are_safe() {
        let mut c = conversation();
        assert_eq!(markdown_file_name(&c), "What-s-15-of-847-3f2a9c1e.md");
        c.title = "../../etc/passwd".into();
        assert_eq!(markdown_file_name(&c), "etc-passwd-3f2a9c1e.md");
        c.title = "   ".into();
        c.id = String::new();
        assert_eq!(markdown_file_name(&c), "conversation.md");
    }

    #[test]
    fn several_files_zip_with_unique_names() {
        use std::io::Read as _;
        let files = vec![
            ("a.md".to_string(), "# A".to_string()),
            ("a.md".to_string(), "# A again".to_string()),
        ];
        let bytes = markdown_zip(&files).unwrap();
        let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
        let mut got = Vec::new();
        for i in 0..z.len() {
            let mut e = z.by_index(i).unwrap();
            let mut text = String::new();
            e.read_to_string(&mut text).unwrap();
            got.push((e.name().to_string(), text));
        }
        assert_eq!(
            got,
            vec![
                ("a.md".to_string(), "# A".to_string()),
                ("a-2.md".to_string(), "# A again".to_string()),
            ]
        );
    }

    #[test]
    fn minutes_in_utc() {
        assert_eq!(utc_minute(T), "2026-05-01 14:03 UTC");
        assert_eq!(utc_minute(0.0), "1970-01-01 00:00 UTC");
        assert_eq!(utc_minute(-60_000.0), "1969-12-31 23:59 UTC");
    }
}
