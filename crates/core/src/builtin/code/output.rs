//! What a code run gives back: text for the model, a structured report for
//! the result card, and the files it wrote as downloadable artifacts.
//!
//! Output is capped twice: the sandbox stops collecting past the run's
//! limits and counts what it dropped, and the text here says so
//! explicitly ("… 12.3 KB more not shown"), so neither the model nor the
//! person mistakes a truncated output for the whole.

use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::protocol::{ArtifactRef, Language, RunError, RunOutcome, RunStatus, Stop};
use crate::skill::call::{Content, SkillError, SkillOutput};
use crate::util::display;

/// The structured result of a run, stored with it and rendered by the card.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CodeReport {
    pub language: Language,
    pub status: RunStatus,
    pub stdout: String,
    pub stderr: String,
    #[serde(default)]
    pub stdout_dropped: u64,
    #[serde(default)]
    pub stderr_dropped: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_repr: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<RunError>,
    #[serde(default)]
    pub artifacts: Vec<ArtifactInfo>,
    #[serde(default)]
    pub artifacts_dropped: Vec<String>,
    /// Time inside the sandbox.
    pub run_ms: f64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactInfo {
    pub name: String,
    pub mime_type: String,
    pub size: u64,
}

impl CodeReport {
    pub fn new(language: Language, outcome: &RunOutcome) -> Self {
        CodeReport {
            language,
            status: outcome.status,
            stdout: outcome.stdout.clone(),
            stderr: outcome.stderr.clone(),
            stdout_dropped: outcome.stdout_dropped,
            stderr_dropped: outcome.stderr_dropped,
            value: outcome.value.clone(),
            value_repr: outcome.value_repr.clone(),
            error: outcome.error.clone(),
            artifacts: outcome
                .artifacts
                .iter()
                .map(|a| ArtifactInfo {
                    name: a.name.clone(),
                    mime_type: mime_type(&a.name).to_string(),
                    size: a.size,
                })
                .collect(),
            artifacts_dropped: outcome.artifacts_dropped.clone(),
            run_ms: outcome.duration_ms,
        }
    }

    /// The value as people read it: the language's own rendering, else the
    /// JSON.
    pub fn value_text(&self) -> Option<String> {
        self.value_repr
            .clone()
            .or_else(|| self.value.as_ref().map(Value::to_string))
    }
}

/// The JSON Schema of [`CodeReport`], the run skills' output schema.
pub fn report_schema() -> Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "language": {"enum": ["javascript", "python"]},
            "status": {"enum": ["completed", "error", "timeout", "crashed", "stopped"]},
            "stdout": {"type": "string"},
            "stderr": {"type": "string"},
            "stdout_dropped": {"type": "integer", "minimum": 0},
            "stderr_dropped": {"type": "integer", "minimum": 0},
            "value": {},
            "value_repr": {"type": "string"},
            "artifacts": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "mime_type": {"type": "string"},
                        "size": {"type": "integer", "minimum": 0}
                    },
                    "required": ["name", "mime_type", "size"]
                }
            },
            "artifacts_dropped": {"type": "array", "items": {"type": "string"}},
            "run_ms": {"type": "number", "minimum": 0}
        },
        "required": ["language", "status", "stdout", "stderr", "artifacts", "run_ms"]
    })
}

/// `text` cut to at most `max` UTF-8 bytes on a character boundary, and
/// how many bytes were cut.
pub fn cap(text: &str, max: usize) -> (String, u64) {
    let kept = super::grant::truncate_bytes(text, max);
    (kept.to_string(), (text.len() - kept.len()) as u64)
}

/// The line that ends a truncated stream.
pub fn truncation_notice(dropped: u64) -> String {
    format!(
        "[… output truncated: {} more not shown]",
        display::bytes(dropped as f64)
    )
}

/// A MIME type for a file the code wrote, by its extension. Artifacts are
/// only ever offered as downloads, so this is a hint for the person's
/// system, not something the app renders.
pub fn mime_type(name: &str) -> &'static str {
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "txt" | "log" | "md" => "text/plain",
        "csv" => "text/csv",
        "tsv" => "text/tab-separated-values",
        "json" => "application/json",
        "html" | "htm" => "text/html",
        "xml" => "application/xml",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        "py" => "text/x-python",
        "js" => "text/javascript",
        _ => "application/octet-stream",
    }
}

/// Whether the card may preview an artifact as an image. SVG is left out:
/// it is a document, and the card shows only raster pictures.
pub fn is_previewable_image(mime_type: &str) -> bool {
    matches!(
        mime_type,
        "image/png" | "image/jpeg" | "image/gif" | "image/webp"
    )
}

fn stream_section(label: &str, text: &str, dropped: u64, out: &mut Vec<String>) {
    if text.is_empty() && dropped == 0 {
        return;
    }
    let mut section = format!("{label}:\n{}", text.trim_end_matches('\n'));
    if dropped > 0 {
        section.push('\n');
        section.push_str(&truncation_notice(dropped));
    }
    out.push(section);
}

/// The text the model reads for a run that completed.
pub fn completed_text(report: &CodeReport) -> String {
    let mut parts = Vec::new();
    stream_section("stdout", &report.stdout, report.stdout_dropped, &mut parts);
    stream_section("stderr", &report.stderr, report.stderr_dropped, &mut parts);
    if let Some(value) = report.value_text() {
        parts.push(format!("value: {value}"));
    }
    if !report.artifacts.is_empty() {
        let files: Vec<String> = report
            .artifacts
            .iter()
            .map(|a| format!("{} ({})", a.name, display::bytes(a.size as f64)))
            .collect();
        parts.push(format!(
            "files written to /mnt/out, offered to the person as downloads: {}",
            files.join(", ")
        ));
    }
    if !report.artifacts_dropped.is_empty() {
        parts.push(format!(
            "files not returned: {}",
            report.artifacts_dropped.join("; ")
        ));
    }
    if parts.is_empty() {
        "(no output)".to_string()
    } else {
        parts.join("\n")
    }
}

/// The message for a run that did not complete.
pub fn failure_text(report: &CodeReport, timeout_ms: u32, stopped: Option<Stop>) -> String {
    let mut head = match report.status {
        RunStatus::Error => match &report.error {
            Some(e) => {
                let line = e.line.map(|l| format!(" (line {l})")).unwrap_or_default();
                let mut s = format!("{}: {}{line}", e.name, e.message);
                if let Some(tb) = &e.traceback
                    && !tb.trim().is_empty()
                {
                    // Frames alone (JavaScript's "    at …") continue the
                    // header; a whole traceback (Python's) stands apart.
                    let frames_only = tb.starts_with(char::is_whitespace);
                    s.push_str(if frames_only { "\n" } else { "\n\n" });
                    s.push_str(tb.trim_end());
                }
                s
            }
            None => "the code failed without saying why".to_string(),
        },
        RunStatus::Timeout => {
            let limit = display::duration(timeout_ms as f64);
            match (report.language, stopped) {
                (Language::Python, Some(Stop::Interrupt)) => format!(
                    "timed out after {limit}: Python was interrupted (KeyboardInterrupt); variables from earlier runs are kept"
                ),
                (Language::Python, Some(Stop::Terminate) | None) => format!(
                    "timed out after {limit}: Python did not stop when interrupted, so it was restarted and variables from earlier runs are gone"
                ),
                (Language::Python, Some(Stop::Uninterruptible)) => format!(
                    "timed out after {limit}: Python was stopped by restarting it, as this page cannot interrupt it (see Settings → Code); variables from earlier runs are gone"
                ),
                (Language::Javascript, _) => {
                    format!("timed out after {limit}: the run's worker was stopped")
                }
            }
        }
        RunStatus::Stopped => match (report.language, stopped) {
            (_, None) => "stopped by you before it started".to_string(),
            (Language::Python, Some(Stop::Interrupt)) => {
                "stopped by you: Python was interrupted (KeyboardInterrupt); variables from earlier runs are kept".to_string()
            }
            (Language::Python, Some(Stop::Terminate)) => {
                "stopped by you: Python did not stop when interrupted, so it was restarted and variables from earlier runs are gone".to_string()
            }
            (Language::Python, Some(Stop::Uninterruptible)) => {
                "stopped by you, by restarting Python, as this page cannot interrupt it (see Settings → Code); variables from earlier runs are gone".to_string()
            }
            (Language::Javascript, Some(_)) => {
                "stopped by you: the run's worker was ended".to_string()
            }
        },
        RunStatus::Crashed => format!(
            "the {} worker crashed (it may have run out of memory); it was restarted{}",
            report.language.label(),
            match report.language {
                Language::Python => ", and variables from earlier runs are gone",
                Language::Javascript => "",
            }
        ),
        RunStatus::Completed => "the run completed".to_string(),
    };
    let mut before = Vec::new();
    stream_section("stdout", &report.stdout, report.stdout_dropped, &mut before);
    stream_section("stderr", &report.stderr, report.stderr_dropped, &mut before);
    if !before.is_empty() {
        head.push_str("\n\nOutput before it stopped:\n");
        head.push_str(&before.join("\n"));
    }
    head
}

/// The error code of a run the person stopped, so the card can tell it
/// from a failure.
pub const STOPPED_CODE: &str = "stopped";

/// Turns a run's outcome into the skill's result. `artifacts` holds the
/// bytes of each artifact the outcome lists, in the same order.
pub fn skill_result(
    language: Language,
    outcome: &RunOutcome,
    artifacts: &[Vec<u8>],
    timeout_ms: u32,
) -> Result<SkillOutput, SkillError> {
    let report = CodeReport::new(language, outcome);
    match outcome.status {
        RunStatus::Completed => {
            let mut content = vec![Content::Text {
                text: completed_text(&report),
            }];
            let structured = serde_json::to_value(&report).unwrap_or(Value::Null);
            content.push(Content::Json {
                value: structured.clone(),
            });
            for (info, bytes) in report.artifacts.iter().zip(artifacts) {
                content.push(Content::Artifact {
                    name: info.name.clone(),
                    mime_type: info.mime_type.clone(),
                    data: base64::engine::general_purpose::STANDARD.encode(bytes),
                });
            }
            Ok(SkillOutput {
                content,
                structured: Some(structured),
                undo: None,
            })
        }
        RunStatus::Stopped => Err(SkillError {
            code: Some(STOPPED_CODE.to_string()),
            ..SkillError::new(failure_text(&report, timeout_ms, outcome.stopped))
        }),
        RunStatus::Error | RunStatus::Timeout | RunStatus::Crashed => Err(SkillError::new(
            failure_text(&report, timeout_ms, outcome.stopped),
        )),
    }
}

/// What a script run for an Agent Skills tool answers: its stdout when that
/// parses as JSON, else the value of its last expression, else its stdout
/// as a string. A run that did not complete is an error with the same
/// message a code run gives.
pub fn script_output(
    language: Language,
    outcome: &RunOutcome,
    timeout_ms: u32,
) -> Result<Value, String> {
    match outcome.status {
        RunStatus::Completed => {
            let stdout = outcome.stdout.trim();
            if !stdout.is_empty()
                && outcome.stdout_dropped == 0
                && let Ok(value) = serde_json::from_str::<Value>(stdout)
            {
                return Ok(value);
            }
            if stdout.is_empty()
                && let Some(value) = &outcome.value
            {
                return Ok(value.clone());
            }
            let report = CodeReport::new(language, outcome);
            let mut text = outcome.stdout.clone();
            if outcome.stdout_dropped > 0 {
                text.push_str(&truncation_notice(outcome.stdout_dropped));
            }
            if text.is_empty() {
                text = completed_text(&report);
            }
            Ok(Value::String(text))
        }
        RunStatus::Error | RunStatus::Timeout | RunStatus::Crashed | RunStatus::Stopped => {
            Err(failure_text(
                &CodeReport::new(language, outcome),
                timeout_ms,
                outcome.stopped,
            ))
        }
    }
}

/// Decodes an artifact's base64 data for download.
pub fn artifact_bytes(data: &str) -> Result<Vec<u8>, String> {
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| format!("the file's stored data is damaged: {e}"))
}

/// Artifact refs and their sizes, for checking a message's buffers.
pub fn artifact_sizes(artifacts: &[ArtifactRef]) -> Vec<u64> {
    artifacts.iter().map(|a| a.size).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::validate;
    use serde_json::json;

    fn outcome(status: RunStatus) -> RunOutcome {
        RunOutcome {
            status,
            stdout: String::new(),
            stdout_dropped: 0,
            stderr: String::new(),
            stderr_dropped: 0,
            value: None,
            value_repr: None,
            error: None,
            artifacts: vec![],
            artifacts_dropped: vec![],
            duration_ms: 2.0,
            stopped: None,
        }
    }

    fn run(language: Language, o: RunOutcome, artifacts: &[Vec<u8>]) -> String {
        match skill_result(language, &o, artifacts, 1_500) {
            Ok(out) => format!(
                "ok {}",
                crate::skill::call::ToolResult {
                    content: out.content,
                    ..crate::skill::call::ToolResult::for_call(
                        &crate::skill::call::ToolCall {
                            id: "c".into(),
                            skill_id: crate::skill::SkillId::new("run_python").unwrap(),
                            arguments: json!({}),
                            conversation_id: None,
                            origin: crate::skill::call::CallOrigin::User,
                        },
                        crate::skill::call::ToolStatus::Completed,
                    )
                }
                .text()
                .unwrap_or_default()
            ),
            Err(e) => format!("err {e}"),
        }
    }

    #[test]
    fn results_read_clearly() {
        let mut printed = outcome(RunStatus::Completed);
        printed.stdout = "45\n".into();
        let mut valued = outcome(RunStatus::Completed);
        valued.value = Some(json!({"a": [1, 2]}));
        let mut repr = valued.clone();
        repr.value_repr = Some("{'a': [1, 2]}".into());
        let mut truncated = outcome(RunStatus::Completed);
        truncated.stdout = "aaaa".into();
        truncated.stdout_dropped = 12_300;
        truncated.stderr = "warn\n".into();
        let mut files = outcome(RunStatus::Completed);
        files.artifacts = vec![ArtifactRef {
            name: "out.csv".into(),
            size: 4,
            buffer: 0,
        }];
        files.artifacts_dropped = vec!["huge.bin: 40.0 MB, over the 16.8 MB limit".into()];
        let mut raised = outcome(RunStatus::Error);
        raised.stdout = "before\n".into();
        raised.error = Some(RunError {
            name: "NameError".into(),
            message: "name 'x' is not defined".into(),
            line: Some(3),
            traceback: Some("Traceback (most recent call last):\n  File \"<code>\", line 3, in <module>\nNameError: name 'x' is not defined\n".into()),
        });
        let mut thrown = outcome(RunStatus::Error);
        thrown.error = Some(RunError {
            name: "TypeError".into(),
            message: "Failed to fetch".into(),
            line: Some(1),
            traceback: Some("    at snippet.js:1:7".into()),
        });
        let mut interrupted = outcome(RunStatus::Timeout);
        interrupted.stopped = Some(Stop::Interrupt);
        interrupted.stdout = "tick\n".into();
        let mut terminated = outcome(RunStatus::Timeout);
        terminated.stopped = Some(Stop::Terminate);
        let mut uninterruptible = outcome(RunStatus::Timeout);
        uninterruptible.stopped = Some(Stop::Uninterruptible);
        let stopped = |how: Option<Stop>| {
            let mut o = outcome(RunStatus::Stopped);
            o.stopped = how;
            o
        };
        let mut stopped_with_output = stopped(Some(Stop::Interrupt));
        stopped_with_output.stdout = "0\n1\n".into();

        let cases: Vec<(Language, RunOutcome, &str)> = vec![
            (
                Language::Python,
                outcome(RunStatus::Completed),
                "ok (no output)",
            ),
            (Language::Python, printed, "ok stdout:\n45"),
            (Language::Javascript, valued, "ok value: {\"a\":[1,2]}"),
            (Language::Python, repr, "ok value: {'a': [1, 2]}"),
            (
                Language::Python,
                truncated,
                "ok stdout:\naaaa\n[… output truncated: 12.3 KB more not shown]\nstderr:\nwarn",
            ),
            (
                Language::Python,
                files,
                "ok files written to /mnt/out, offered to the person as downloads: out.csv (4 B)\nfiles not returned: huge.bin: 40.0 MB, over the 16.8 MB limit",
            ),
            (
                Language::Python,
                raised,
                "err NameError: name 'x' is not defined (line 3)\n\nTraceback (most recent call last):\n  File \"<code>\", line 3, in <module>\nNameError: name 'x' is not defined\n\nOutput before it stopped:\nstdout:\nbefore",
            ),
            (
                Language::Javascript,
                thrown,
                "err TypeError: Failed to fetch (line 1)\n    at snippet.js:1:7",
            ),
            (
                Language::Python,
                interrupted,
                "err timed out after 1.5 s: Python was interrupted (KeyboardInterrupt); variables from earlier runs are kept\n\nOutput before it stopped:\nstdout:\ntick",
            ),
            (
                Language::Python,
                terminated,
                "err timed out after 1.5 s: Python did not stop when interrupted, so it was restarted and variables from earlier runs are gone",
            ),
            (
                Language::Python,
                uninterruptible,
                "err timed out after 1.5 s: Python was stopped by restarting it, as this page cannot interrupt it (see Settings → Code); variables from earlier runs are gone",
            ),
            (
                Language::Javascript,
                outcome(RunStatus::Timeout),
                "err timed out after 1.5 s: the run's worker was stopped",
            ),
            (
                Language::Python,
                stopped_with_output,
                "err stopped by you: Python was interrupted (KeyboardInterrupt); variables from earlier runs are kept\n\nOutput before it stopped:\nstdout:\n0\n1",
            ),
            (
                Language::Python,
                stopped(Some(Stop::Terminate)),
                "err stopped by you: Python did not stop when interrupted, so it was restarted and variables from earlier runs are gone",
            ),
            (
                Language::Python,
                stopped(Some(Stop::Uninterruptible)),
                "err stopped by you, by restarting Python, as this page cannot interrupt it (see Settings → Code); variables from earlier runs are gone",
            ),
            (
                Language::Python,
                stopped(None),
                "err stopped by you before it started",
            ),
            (
                Language::Javascript,
                stopped(Some(Stop::Terminate)),
                "err stopped by you: the run's worker was ended",
            ),
            (
                Language::Javascript,
                outcome(RunStatus::Crashed),
                "err the JavaScript worker crashed (it may have run out of memory); it was restarted",
            ),
        ];
        for (language, o, want) in cases {
            assert_eq!(
                run(language, o.clone(), &[b"a,b\n".to_vec()]),
                want,
                "{o:?}"
            );
        }
    }

    #[test]
    fn a_stopped_run_says_so_in_its_error_code() {
        let mut o = outcome(RunStatus::Stopped);
        o.stopped = Some(Stop::Interrupt);
        let e = skill_result(Language::Python, &o, &[], 1000).unwrap_err();
        assert_eq!(e.code.as_deref(), Some(STOPPED_CODE));
        let e =
            skill_result(Language::Python, &outcome(RunStatus::Timeout), &[], 1000).unwrap_err();
        assert_eq!(e.code, None);
    }

    #[test]
    fn completed_runs_carry_a_valid_report_and_the_files() {
        let mut o = outcome(RunStatus::Completed);
        o.stdout = "hi\n".into();
        o.artifacts = vec![ArtifactRef {
            name: "plot.png".into(),
            size: 3,
            buffer: 0,
        }];
        let out = skill_result(Language::Python, &o, &[vec![1, 2, 3]], 1000).unwrap();
        let report = out.structured.clone().unwrap();
        assert_eq!(validate(&report_schema(), &report), vec![]);
        assert_eq!(
            out.content[2],
            Content::Artifact {
                name: "plot.png".into(),
                mime_type: "image/png".into(),
                data: "AQID".into()
            }
        );
        assert_eq!(artifact_bytes("AQID"), Ok(vec![1, 2, 3]));
        assert!(artifact_bytes("!!").is_err());
    }

    #[test]
    fn scripts_answer_with_json_value_or_text() {
        let with = |stdout: &str, value: Option<Value>| {
            let mut o = outcome(RunStatus::Completed);
            o.stdout = stdout.into();
            o.value = value;
            script_output(Language::Python, &o, 1000)
        };
        let cases = [
            (with("{\"sum\": 3}\n", None), Ok(json!({"sum": 3}))),
            (with("plain words\n", None), Ok(json!("plain words\n"))),
            (with("", Some(json!([1, 2]))), Ok(json!([1, 2]))),
            (with("", None), Ok(json!("(no output)"))),
            (
                script_output(Language::Python, &outcome(RunStatus::Timeout), 1000),
                Err("timed out after 1.0 s: Python did not stop when interrupted, so it was restarted and variables from earlier runs are gone".to_string()),
            ),
        ];
        for (got, want) in cases {
            assert_eq!(got, want);
        }
    }

    #[test]
    fn capping_keeps_whole_characters() {
        assert_eq!(cap("héllo", 2), ("h".to_string(), 5));
        assert_eq!(cap("abc", 10), ("abc".to_string(), 0));
        let cases = [
            ("a.CSV", "text/csv"),
            ("x.html", "text/html"),
            ("noext", "application/octet-stream"),
            ("p.jpeg", "image/jpeg"),
        ];
        for (name, want) in cases {
            assert_eq!(mime_type(name), want, "{name}");
        }
        assert!(is_previewable_image("image/png"));
        assert!(!is_previewable_image("image/svg+xml"));
    }
}
