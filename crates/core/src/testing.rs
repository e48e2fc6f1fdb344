//! Fakes for tests, shared by hearth-core's own tests, its benches and the
//! crates above (behind the `testing` feature, which only dev-dependencies
//! turn on): a clock, a call builder, a scripted approver and the two skills
//! the assistant's tests run for real.

use std::cell::RefCell;

use futures::FutureExt;
use futures::future::LocalBoxFuture;
use serde_json::{Value, json};

use crate::builtin::calculator::{self, Clock};
use crate::discovery::{self, IndexedSkill, SkillIndex};
use crate::skill::approval::{ApprovalAnswer, ApprovalRequest, Approver};
use crate::skill::call::{CallOrigin, SkillError, SkillOutput, ToolCall};
use crate::skill::invoke::Executor;
use crate::skill::{Category, SkillDefinition, SkillId, Tier};

/// The clock every crate's tests share.
pub use hearth_base::testing::FakeClock;

/// Builds a [`ToolCall`]: by default id `c`, empty object arguments, no
/// conversation, from the model.
#[derive(Clone, Debug)]
pub struct CallBuilder(ToolCall);

/// A call of `skill` (which must be a valid skill id).
pub fn call(skill: &str) -> CallBuilder {
    CallBuilder(ToolCall {
        id: "c".into(),
        skill_id: SkillId::new(skill).unwrap(),
        arguments: Value::Object(Default::default()),
        conversation_id: None,
        origin: CallOrigin::Model,
    })
}

impl CallBuilder {
    pub fn id(mut self, id: &str) -> Self {
        self.0.id = id.into();
        self
    }

    pub fn args(mut self, arguments: Value) -> Self {
        self.0.arguments = arguments;
        self
    }

    pub fn in_conversation(mut self, conversation: &str) -> Self {
        self.0.conversation_id = Some(conversation.into());
        self
    }

    pub fn origin(mut self, origin: CallOrigin) -> Self {
        self.0.origin = origin;
        self
    }

    pub fn build(self) -> ToolCall {
        self.0
    }
}

impl From<CallBuilder> for ToolCall {
    fn from(b: CallBuilder) -> ToolCall {
        b.0
    }
}

/// Plays the person at the approval dialog: gives the scripted answers in
/// turn, then the fallback (or panics when there is none, so a test that
/// asks more often than it meant to fails), and keeps every request.
pub struct ScriptedApprover {
    answers: RefCell<Vec<ApprovalAnswer>>,
    then: Option<ApprovalAnswer>,
    asked: RefCell<Vec<ApprovalRequest>>,
}

impl ScriptedApprover {
    /// Answers with `answers`, one per request, and no more.
    pub fn new(answers: impl IntoIterator<Item = ApprovalAnswer>) -> Self {
        Self {
            answers: RefCell::new(answers.into_iter().collect()),
            then: None,
            asked: RefCell::new(Vec::new()),
        }
    }

    /// Answers every request with `answer`.
    pub fn always(answer: ApprovalAnswer) -> Self {
        Self {
            then: Some(answer),
            ..Self::new([])
        }
    }

    /// The requests shown so far, oldest first.
    pub fn asked(&self) -> std::cell::Ref<'_, Vec<ApprovalRequest>> {
        self.asked.borrow()
    }
}

impl Approver for ScriptedApprover {
    fn ask<'a>(&'a self, request: ApprovalRequest) -> LocalBoxFuture<'a, ApprovalAnswer> {
        self.asked.borrow_mut().push(request);
        let mut answers = self.answers.borrow_mut();
        let answer = if answers.is_empty() {
            self.then
                .expect("the approver was asked more often than scripted")
        } else {
            answers.remove(0)
        };
        async move { answer }.boxed_local()
    }
}

/// Runs `discover_skills` over an index and the real calculator (with
/// the clock at the epoch, UTC), the way the app runs them; `web_fetch`
/// answers with a fixed page; any other skill fails with "no handler".
pub struct Skills {
    index: SkillIndex,
    enabled: Box<dyn Fn(&IndexedSkill) -> bool>,
}

impl Skills {
    /// Discovery over `skills`, offering those `enabled` says are on.
    pub fn new(
        skills: &[SkillDefinition],
        enabled: impl Fn(&IndexedSkill) -> bool + 'static,
    ) -> Self {
        Self {
            index: SkillIndex::build(skills),
            enabled: Box::new(enabled),
        }
    }
}

impl Executor for Skills {
    fn execute<'a>(
        &'a self,
        skill: &'a SkillDefinition,
        call: &'a ToolCall,
    ) -> LocalBoxFuture<'a, Result<SkillOutput, SkillError>> {
        async move {
            match skill.id.as_str() {
                "discover_skills" => {
                    discovery::discover_output(&self.index, &call.arguments, &*self.enabled)
                        .map_err(|e| SkillError::new(e.to_string()))
                }
                "calculator" => {
                    let expr = call.arguments["expression"].as_str().unwrap_or_default();
                    let c = calculator::evaluate(
                        expr,
                        Clock {
                            unix_ms: 0.0,
                            utc_offset_minutes: 0,
                        },
                    )
                    .map_err(|e| SkillError::new(e.to_string()))?;
                    Ok(SkillOutput::text_and_json(
                        c.result.clone(),
                        json!({"expression": c.expression, "result": c.result}),
                    ))
                }
                "web_fetch" => Ok(SkillOutput::text("<html>fetched</html>")),
                other => Err(SkillError::new(format!("no handler for {other}"))),
            }
        }
        .boxed_local()
    }
}

/// A network-tier `web_fetch` skill taking a `url` ([`Skills`] answers it
/// with a fixed page).
pub fn web_fetch() -> SkillDefinition {
    SkillDefinition::new(
        SkillId::new("web_fetch").unwrap(),
        "Web fetch",
        Tier::Network,
        Category::Network,
    )
    .with_description("Download a web page and return its readable text.")
    .with_tags(["web", "fetch", "url"])
    .with_examples(["read this page"])
    .with_input_schema(
        json!({"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}),
    )
}
