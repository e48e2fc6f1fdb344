//! The app ↔ sandbox protocol, version 1: plain data, checked here.
//!
//! The app and the sandbox page (an opaque-origin iframe) talk over one
//! `MessagePort`. Every message is a JS object `{json, buffers}`: `json` is
//! a string holding one of the messages below with `"v": 1` and a `"kind"`
//! tag; `buffers` is a list of `ArrayBuffer`s (file contents, the Python
//! runtime, artifacts) that the JSON points at by index, transferred rather
//! than copied. Keeping the structured part a string lets the app bound its
//! size before parsing and parse it with serde, here, natively tested.
//!
//! What the sandbox sends is untrusted: [`parse_sandbox_message`] refuses
//! anything oversized, of another version, with unknown fields, or whose
//! buffer references do not match the buffers that came with it. Results
//! are data — text and JSON — and never markup.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::grant::RelPath;

pub const PROTOCOL_VERSION: u32 = 1;

/// The largest JSON part the app accepts from the sandbox.
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;
/// Hard caps the app applies whatever limits it asked for.
pub const MAX_STREAM_BYTES: usize = 1024 * 1024;
pub const MAX_VALUE_BYTES: usize = 256 * 1024;
pub const MAX_ARTIFACTS: usize = 32;
pub const MAX_ARTIFACT_TOTAL_BYTES: u64 = 32 * 1024 * 1024;
const MAX_ID_LEN: usize = 64;
const MAX_SHORT_TEXT: usize = 4096;
const MAX_TRACEBACK: usize = 64 * 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Javascript,
    Python,
}

impl Language {
    pub fn label(self) -> &'static str {
        match self {
            Language::Javascript => "JavaScript",
            Language::Python => "Python",
        }
    }
}

/// What the sandbox enforces on a run's output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Per stream (stdout, stderr), in UTF-8 bytes.
    pub max_output_bytes: u32,
    /// The JSON of the returned value.
    pub max_value_bytes: u32,
    pub max_artifacts: u32,
    /// All artifacts together.
    pub max_artifact_bytes: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_output_bytes: 64 * 1024,
            max_value_bytes: 64 * 1024,
            max_artifacts: 16,
            max_artifact_bytes: 16 * 1024 * 1024,
        }
    }
}

/// A buffer that came with a message, by index, and what it is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NamedBuffer {
    /// For the runtime: its file name. For a run's files: where code sees
    /// it, e.g. `/mnt/data/fixtures/a.csv`.
    pub name: String,
    pub buffer: u32,
}

/// A run of one snippet.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunRequest {
    pub id: String,
    pub language: Language,
    pub code: String,
    /// JSON handed to the code: `input` in JavaScript, stdin in Python.
    #[serde(default)]
    pub input: Option<Value>,
    #[serde(default)]
    pub files: Vec<NamedBuffer>,
    pub timeout_ms: u32,
    /// Python only: runs with the same session share their variables.
    /// `None` gives the run fresh variables.
    #[serde(default)]
    pub session: Option<String>,
    /// Python only: the conversation the run belongs to. Each conversation
    /// has an interpreter (a worker) of its own, so no run ever sees the
    /// variables, modules or files of another conversation's runs. `None`
    /// is the command bar outside any conversation.
    #[serde(default)]
    pub conversation: Option<String>,
    pub limits: Limits,
}

/// App → sandbox.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum HostMessage {
    /// The first message: the sources of the two worker runners.
    Init {
        javascript_runner: String,
        python_runner: String,
    },
    /// Start Python from the runtime files that come as buffers.
    LoadPython {
        id: String,
        files: Vec<NamedBuffer>,
    },
    Run(RunRequest),
    /// Stop the Python worker; the next run starts a fresh one.
    RestartPython {
        id: String,
    },
    /// Are you alive? The sandbox page answers at once: its own thread
    /// never runs untrusted code, so silence means its process died.
    Ping {
        id: String,
    },
    /// Stop the run `id` now, because the person asked: JavaScript's
    /// worker is terminated at once; Python is interrupted where the page
    /// can (its variables are kept), and its worker terminated where it
    /// cannot or the interrupt does not stop it. The run answers as
    /// [`RunStatus::Stopped`]; a run that already ended is left alone, and
    /// nothing answers the stop itself.
    Stop {
        id: String,
    },
}

impl HostMessage {
    /// The JSON part of the message, with the protocol version.
    pub fn to_json(&self) -> String {
        let mut value = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut value {
            map.insert("v".into(), Value::from(PROTOCOL_VERSION));
        }
        value.to_string()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// The code ran to the end.
    Completed,
    /// The code raised or threw.
    Error,
    /// The wall-clock limit stopped it.
    Timeout,
    /// The worker died under it, e.g. out of memory.
    Crashed,
    /// The person stopped it.
    Stopped,
}

/// How a run that overran was stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stop {
    /// Python's interrupt buffer raised KeyboardInterrupt; state is kept.
    Interrupt,
    /// The worker was terminated after the interrupt did not stop it; a
    /// Python session's state is gone.
    Terminate,
    /// Python could not be interrupted here (the page is not cross-origin
    /// isolated), so its worker was terminated at once; its state is gone.
    Uninterruptible,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunError {
    /// e.g. `TypeError`, `NameError`, `SyntaxError`.
    pub name: String,
    pub message: String,
    /// The line in the snippet, counted from 1, when known.
    #[serde(default)]
    pub line: Option<u32>,
    #[serde(default)]
    pub traceback: Option<String>,
}

/// A file the code wrote to `/mnt/out`, whose bytes are `buffer`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArtifactRef {
    pub name: String,
    pub size: u64,
    pub buffer: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunOutcome {
    pub status: RunStatus,
    #[serde(default)]
    pub stdout: String,
    /// Bytes of stdout past the limit, not included.
    #[serde(default)]
    pub stdout_dropped: u64,
    #[serde(default)]
    pub stderr: String,
    #[serde(default)]
    pub stderr_dropped: u64,
    /// The returned value as JSON, when it has a JSON form.
    #[serde(default)]
    pub value: Option<Value>,
    /// How the language itself would print the value (`repr` in Python).
    #[serde(default)]
    pub value_repr: Option<String>,
    #[serde(default)]
    pub error: Option<RunError>,
    #[serde(default)]
    pub artifacts: Vec<ArtifactRef>,
    /// Files left out of the artifacts, with why.
    #[serde(default)]
    pub artifacts_dropped: Vec<String>,
    /// Time inside the sandbox, from the worker receiving the run to its
    /// answer.
    pub duration_ms: f64,
    #[serde(default)]
    pub stopped: Option<Stop>,
}

/// Sandbox → app.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum SandboxMessage {
    /// The answer to `init`.
    Ready {
        cross_origin_isolated: bool,
    },
    /// Python is ready to run code.
    PythonReady {
        id: String,
        version: String,
        load_ms: f64,
    },
    PythonFailed {
        id: String,
        message: String,
    },
    Result {
        id: String,
        outcome: Box<RunOutcome>,
    },
    /// The answer to `ping`.
    Pong {
        id: String,
    },
    /// The sandbox could not take a request.
    Refused {
        #[serde(default)]
        id: Option<String>,
        message: String,
    },
}

impl SandboxMessage {
    /// The id of the request this answers, if any.
    pub fn request_id(&self) -> Option<&str> {
        match self {
            SandboxMessage::Ready { .. } => None,
            SandboxMessage::PythonReady { id, .. }
            | SandboxMessage::PythonFailed { id, .. }
            | SandboxMessage::Result { id, .. }
            | SandboxMessage::Pong { id } => Some(id),
            SandboxMessage::Refused { id, .. } => id.as_deref(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    #[error("the message is {0} bytes, over the {MAX_MESSAGE_BYTES}-byte limit")]
    TooLarge(usize),
    #[error("the message is not JSON: {0}")]
    NotJson(String),
    #[error("the message has protocol version {0}, expected {PROTOCOL_VERSION}")]
    Version(String),
    #[error("the message does not have the expected shape: {0}")]
    Shape(String),
    #[error("{0}")]
    Invalid(String),
}

/// Checks and parses a message from the sandbox. `buffer_sizes` are the
/// byte lengths of the buffers that came with it.
pub fn parse_sandbox_message(
    json: &str,
    buffer_sizes: &[u64],
) -> Result<SandboxMessage, ProtocolError> {
    if json.len() > MAX_MESSAGE_BYTES {
        return Err(ProtocolError::TooLarge(json.len()));
    }
    let mut value: Value =
        serde_json::from_str(json).map_err(|e| ProtocolError::NotJson(e.to_string()))?;
    let Value::Object(map) = &mut value else {
        return Err(ProtocolError::Shape("not an object".into()));
    };
    match map.remove("v") {
        Some(Value::Number(n)) if n.as_u64() == Some(PROTOCOL_VERSION as u64) => {}
        Some(other) => return Err(ProtocolError::Version(other.to_string())),
        None => return Err(ProtocolError::Version("none".into())),
    }
    let message: SandboxMessage =
        serde_json::from_value(value).map_err(|e| ProtocolError::Shape(e.to_string()))?;
    check_message(&message, buffer_sizes)?;
    Ok(message)
}

fn invalid(message: impl Into<String>) -> ProtocolError {
    ProtocolError::Invalid(message.into())
}

fn check_id(id: &str) -> Result<(), ProtocolError> {
    let ok = !id.is_empty()
        && id.len() <= MAX_ID_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(invalid(
            "a request id must be 1–64 letters, digits, '-' or '_'",
        ))
    }
}

fn check_len(what: &str, text: &str, max: usize) -> Result<(), ProtocolError> {
    if text.len() > max {
        Err(invalid(format!(
            "{what} is {} bytes, over its {max}-byte limit",
            text.len()
        )))
    } else {
        Ok(())
    }
}

fn check_message(message: &SandboxMessage, buffer_sizes: &[u64]) -> Result<(), ProtocolError> {
    if let Some(id) = message.request_id() {
        check_id(id)?;
    }
    let expect_buffers = |n: usize| {
        if buffer_sizes.len() == n {
            Ok(())
        } else {
            Err(invalid(format!(
                "{} buffers came with the message, {n} expected",
                buffer_sizes.len()
            )))
        }
    };
    match message {
        SandboxMessage::Ready { .. } | SandboxMessage::Pong { .. } => expect_buffers(0),
        SandboxMessage::PythonReady {
            version, load_ms, ..
        } => {
            check_len("the version", version, 64)?;
            check_duration(*load_ms)?;
            expect_buffers(0)
        }
        SandboxMessage::PythonFailed { message, .. } | SandboxMessage::Refused { message, .. } => {
            check_len("the message", message, MAX_SHORT_TEXT)?;
            expect_buffers(0)
        }
        SandboxMessage::Result { outcome, .. } => check_outcome(outcome, buffer_sizes),
    }
}

fn check_duration(ms: f64) -> Result<(), ProtocolError> {
    if ms.is_finite() && ms >= 0.0 {
        Ok(())
    } else {
        Err(invalid("a duration must be a finite, non-negative number"))
    }
}

fn check_outcome(outcome: &RunOutcome, buffer_sizes: &[u64]) -> Result<(), ProtocolError> {
    check_len("stdout", &outcome.stdout, MAX_STREAM_BYTES)?;
    check_len("stderr", &outcome.stderr, MAX_STREAM_BYTES)?;
    check_duration(outcome.duration_ms)?;
    if let Some(value) = &outcome.value {
        check_len("the value", &value.to_string(), MAX_VALUE_BYTES)?;
    }
    if let Some(repr) = &outcome.value_repr {
        check_len("the value", repr, MAX_VALUE_BYTES)?;
    }
    if let Some(error) = &outcome.error {
        check_len("the error name", &error.name, 256)?;
        check_len("the error message", &error.message, MAX_TRACEBACK)?;
        if let Some(tb) = &error.traceback {
            check_len("the traceback", tb, MAX_TRACEBACK)?;
        }
    }
    if outcome.artifacts_dropped.len() > 1000 {
        return Err(invalid("too many dropped artifacts listed"));
    }
    for note in &outcome.artifacts_dropped {
        check_len("a dropped artifact note", note, MAX_SHORT_TEXT)?;
    }
    if outcome.artifacts.len() > MAX_ARTIFACTS {
        return Err(invalid(format!(
            "{} artifacts, over the limit of {MAX_ARTIFACTS}",
            outcome.artifacts.len()
        )));
    }
    if outcome.artifacts.len() != buffer_sizes.len() {
        return Err(invalid(format!(
            "{} buffers came with {} artifacts",
            buffer_sizes.len(),
            outcome.artifacts.len()
        )));
    }
    let mut seen = vec![false; buffer_sizes.len()];
    let mut names: Vec<&str> = Vec::new();
    let mut total = 0u64;
    for artifact in &outcome.artifacts {
        RelPath::parse(&artifact.name)
            .map_err(|e| invalid(format!("artifact name refused: {e}")))?;
        if names.contains(&artifact.name.as_str()) {
            return Err(invalid(format!(
                "artifact '{}' appears twice",
                artifact.name
            )));
        }
        names.push(&artifact.name);
        let index = artifact.buffer as usize;
        let Some(size) = buffer_sizes.get(index) else {
            return Err(invalid(format!(
                "artifact '{}' points at buffer {index}, which did not come",
                artifact.name
            )));
        };
        if std::mem::replace(&mut seen[index], true) {
            return Err(invalid(format!("buffer {index} is used twice")));
        }
        if *size != artifact.size {
            return Err(invalid(format!(
                "artifact '{}' says {} bytes but its buffer has {size}",
                artifact.name, artifact.size
            )));
        }
        total += size;
    }
    if total > MAX_ARTIFACT_TOTAL_BYTES {
        return Err(invalid(format!(
            "artifacts total {total} bytes, over the limit of {MAX_ARTIFACT_TOTAL_BYTES}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn outcome_json(extra: Value) -> Value {
        let mut base = json!({
            "status": "completed",
            "stdout": "45\n",
            "stderr": "",
            "value": 2,
            "value_repr": "2",
            "artifacts": [],
            "duration_ms": 1.5
        });
        if let (Value::Object(b), Value::Object(e)) = (&mut base, extra) {
            b.extend(e);
        }
        base
    }

    fn result(extra: Value) -> String {
        json!({"v": 1, "kind": "result", "id": "r1", "outcome": outcome_json(extra)}).to_string()
    }

    fn check(json: &str, buffers: &[u64]) -> String {
        match parse_sandbox_message(json, buffers) {
            Ok(SandboxMessage::Result { id, outcome }) => {
                format!("ok result {id} {:?} {:?}", outcome.status, outcome.stdout)
            }
            Ok(other) => format!("ok {other:?}"),
            Err(e) => format!("err {e}"),
        }
    }

    #[test]
    fn sandbox_messages_are_checked() {
        let big = "x".repeat(MAX_STREAM_BYTES + 1);
        let cases: Vec<(String, Vec<u64>, &str)> = vec![
            (result(json!({})), vec![], "ok result r1 Completed \"45\\n\""),
            (
                json!({"v": 1, "kind": "ready", "cross_origin_isolated": true}).to_string(),
                vec![],
                "ok Ready { cross_origin_isolated: true }",
            ),
            (
                json!({"v": 1, "kind": "refused", "message": "busy"}).to_string(),
                vec![],
                "ok Refused { id: None, message: \"busy\" }",
            ),
            ("not json".into(), vec![], "err the message is not JSON: expected ident at line 1 column 2"),
            ("[1]".into(), vec![], "err the message does not have the expected shape: not an object"),
            (
                json!({"kind": "ready", "cross_origin_isolated": true}).to_string(),
                vec![],
                "err the message has protocol version none, expected 1",
            ),
            (
                json!({"v": 2, "kind": "ready", "cross_origin_isolated": true}).to_string(),
                vec![],
                "err the message has protocol version 2, expected 1",
            ),
            (
                json!({"v": "1", "kind": "ready", "cross_origin_isolated": true}).to_string(),
                vec![],
                "err the message has protocol version \"1\", expected 1",
            ),
            (
                json!({"v": 1, "kind": "html", "markup": "<img onerror=alert(1)>"}).to_string(),
                vec![],
                "err the message does not have the expected shape: unknown variant `html`, expected one of `ready`, `python_ready`, `python_failed`, `result`, `pong`, `refused`",
            ),
            (
                json!({"v": 1, "kind": "ready", "cross_origin_isolated": true, "extra": 1}).to_string(),
                vec![],
                "err the message does not have the expected shape: unknown field `extra`, expected `cross_origin_isolated`",
            ),
            (
                result(json!({"__proto__": {"polluted": true}})),
                vec![],
                "err the message does not have the expected shape: unknown field `__proto__`, expected one of `status`, `stdout`, `stdout_dropped`, `stderr`, `stderr_dropped`, `value`, `value_repr`, `error`, `artifacts`, `artifacts_dropped`, `duration_ms`, `stopped`",
            ),
            (
                result(json!({"status": "owned"})),
                vec![],
                "err the message does not have the expected shape: unknown variant `owned`, expected one of `completed`, `error`, `timeout`, `crashed`, `stopped`",
            ),
            (
                result(json!({"stdout": 5})),
                vec![],
                "err the message does not have the expected shape: invalid type: integer `5`, expected a string",
            ),
            (
                json!({"v": 1, "kind": "result", "id": "../../x", "outcome": outcome_json(json!({}))}).to_string(),
                vec![],
                "err a request id must be 1–64 letters, digits, '-' or '_'",
            ),
            (
                result(json!({"stdout": big})),
                vec![],
                "err stdout is 1048577 bytes, over its 1048576-byte limit",
            ),
            (
                result(json!({"duration_ms": -1.0})),
                vec![],
                "err a duration must be a finite, non-negative number",
            ),
            (
                result(json!({"artifacts": [{"name": "a.csv", "size": 3, "buffer": 0}]})),
                vec![3],
                "ok result r1 Completed \"45\\n\"",
            ),
            (
                result(json!({"artifacts": [{"name": "a.csv", "size": 3, "buffer": 0}]})),
                vec![],
                "err 0 buffers came with 1 artifacts",
            ),
            (
                result(json!({"artifacts": [{"name": "a.csv", "size": 3, "buffer": 1}]})),
                vec![3],
                "err artifact 'a.csv' points at buffer 1, which did not come",
            ),
            (
                result(json!({"artifacts": [{"name": "a.csv", "size": 99, "buffer": 0}]})),
                vec![3],
                "err artifact 'a.csv' says 99 bytes but its buffer has 3",
            ),
            (
                result(json!({"artifacts": [{"name": "a", "size": 1, "buffer": 0}, {"name": "b", "size": 1, "buffer": 0}]})),
                vec![1, 1],
                "err buffer 0 is used twice",
            ),
            (
                result(json!({"artifacts": [{"name": "a", "size": 1, "buffer": 0}, {"name": "a", "size": 1, "buffer": 1}]})),
                vec![1, 1],
                "err artifact 'a' appears twice",
            ),
            (
                result(json!({"artifacts": [{"name": "../escape.sh", "size": 1, "buffer": 0}]})),
                vec![1],
                "err artifact name refused: '../escape.sh' uses '..'; paths cannot leave the grant they name",
            ),
            (
                result(json!({"artifacts": [{"name": "big", "size": MAX_ARTIFACT_TOTAL_BYTES + 1, "buffer": 0}]})),
                vec![MAX_ARTIFACT_TOTAL_BYTES + 1],
                "err artifacts total 33554433 bytes, over the limit of 33554432",
            ),
            (
                json!({"v": 1, "kind": "ready", "cross_origin_isolated": false}).to_string(),
                vec![5],
                "err 1 buffers came with the message, 0 expected",
            ),
        ];
        for (json, buffers, want) in cases {
            assert_eq!(check(&json, &buffers), want, "{json:.200}");
        }
    }

    #[test]
    fn oversized_messages_are_refused_before_parsing() {
        let huge = format!("\"{}\"", "x".repeat(MAX_MESSAGE_BYTES));
        assert_eq!(
            parse_sandbox_message(&huge, &[]),
            Err(ProtocolError::TooLarge(MAX_MESSAGE_BYTES + 2))
        );
    }

    #[test]
    fn host_messages_carry_the_version_and_round_trip() {
        let run = HostMessage::Run(RunRequest {
            id: "r1".into(),
            language: Language::Python,
            code: "print(1)".into(),
            input: Some(json!({"a": 1})),
            files: vec![NamedBuffer {
                name: "/mnt/data/x.csv".into(),
                buffer: 0,
            }],
            timeout_ms: 10_000,
            session: Some("conv".into()),
            conversation: Some("conv".into()),
            limits: Limits::default(),
        });
        let json = run.to_json();
        let value: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value["v"], json!(1));
        assert_eq!(value["kind"], json!("run"));
        let mut without_v = value.clone();
        without_v.as_object_mut().unwrap().remove("v");
        let back: HostMessage = serde_json::from_value(without_v).unwrap();
        assert_eq!(back, run);

        // A stop names the run it stops, in the shape the sandbox page reads.
        let stop = HostMessage::Stop { id: "r1".into() };
        assert_eq!(
            serde_json::from_str::<Value>(&stop.to_json()).unwrap(),
            json!({"v": 1, "kind": "stop", "id": "r1"})
        );
    }

    #[test]
    fn a_stopped_run_is_a_result_the_app_accepts() {
        let json = json!({
            "v": 1, "kind": "result", "id": "r1",
            "outcome": {"status": "stopped", "stdout": "partial\n", "duration_ms": 12.5, "stopped": "interrupt"}
        })
        .to_string();
        match parse_sandbox_message(&json, &[]) {
            Ok(SandboxMessage::Result { outcome, .. }) => {
                assert_eq!(outcome.status, RunStatus::Stopped);
                assert_eq!(outcome.stopped, Some(Stop::Interrupt));
                assert_eq!(outcome.stdout, "partial\n");
            }
            other => panic!("{other:?}"),
        }
    }
}
