//! The one call path every skill goes through:
//! `invoke(call) -> ToolResult`.
//!
//! A call runs through a fixed order around the skill's executor: guards
//! (checks that can only end a call, such as the offline check), then the
//! permission hook, which every invoker has because [`Invoker::new`]
//! requires it, then the other hooks' before-steps; any of these may answer
//! the call itself (the permission hook does this to deny). After-steps run
//! in reverse order on every result, short-circuited or not (the activity
//! log is one).
//! Inputs are validated before the executor runs and outputs after it.
//! Every failure — unknown skill, bad input, an executor error, a panic
//! where the platform can catch one — comes back as a `failed` result.
//! A skill that only names another one to reach ([`Executor::redirect`])
//! hands its call back here, so the other skill runs as itself.

use std::rc::Rc;

use futures::FutureExt;
use futures::future::LocalBoxFuture;

use crate::schema::validate;
use crate::skill::approval::PermissionHook;
use crate::skill::call::{SkillError, SkillOutput, ToolCall, ToolResult, ToolStatus};
pub use crate::skill::hook::{CallContext, Guard, Hook};
use crate::skill::permission::{CallFacts, DecidedBy};
use crate::skill::{SkillDefinition, SkillId};

/// Wall time and a monotonic clock, given by the platform (shared with
/// the protocol crates, so it lives in hearth-base).
pub use hearth_base::TimeSource;

/// Runs skills. The app's executor is [`crate::skill::source::Sources`], which
/// hands each call to the source that registered its skill.
pub trait Executor {
    fn execute<'a>(
        &'a self,
        skill: &'a SkillDefinition,
        call: &'a ToolCall,
    ) -> LocalBoxFuture<'a, Result<SkillOutput, SkillError>>;

    /// Facts about a call that the permission decision needs, such as
    /// whether it deletes many records at once.
    fn assess(&self, _skill: &SkillDefinition, _call: &ToolCall) -> CallFacts {
        CallFacts::default()
    }

    /// For a skill that only names another skill to reach (such as
    /// `call_skill_tool` naming a package's tool): the call to make in its
    /// place. The call path then makes that call in full — its own
    /// permission decision, input checks and Activity record — and answers
    /// this one with its result, so the skill behind is never reached
    /// around its own settings. `None`: run this skill itself.
    fn redirect(
        &self,
        _skill: &SkillDefinition,
        _call: &ToolCall,
    ) -> Option<Result<ToolCall, SkillError>> {
        None
    }
}

type Lookup = Rc<dyn Fn(&SkillId) -> Option<SkillDefinition>>;

/// The call path, assembled once and shared.
#[derive(Clone)]
pub struct Invoker {
    lookup: Lookup,
    executor: Rc<dyn Executor>,
    time: Rc<dyn TimeSource>,
    guards: Vec<Rc<dyn Guard>>,
    permission: Rc<PermissionHook>,
    hooks: Vec<Rc<dyn Hook>>,
}

impl Invoker {
    /// The call path over `executor`. `permission` is required: there is
    /// no way to build an invoker whose calls skip the permission layer.
    pub fn new(
        lookup: impl Fn(&SkillId) -> Option<SkillDefinition> + 'static,
        executor: Rc<dyn Executor>,
        time: Rc<dyn TimeSource>,
        permission: Rc<PermissionHook>,
    ) -> Self {
        Self {
            lookup: Rc::new(lookup),
            executor,
            time,
            guards: Vec::new(),
            permission,
            hooks: Vec::new(),
        }
    }

    /// Appends a guard; guards run in the order they were added, before
    /// the permission hook.
    pub fn with_guard(mut self, guard: Rc<dyn Guard>) -> Self {
        self.guards.push(guard);
        self
    }

    /// Appends a hook; hooks run after the permission hook, in the order
    /// they were added (their after-steps in reverse).
    pub fn with_hook(mut self, hook: Rc<dyn Hook>) -> Self {
        self.hooks.push(hook);
        self
    }

    pub async fn invoke(&self, call: ToolCall) -> ToolResult {
        self.invoke_at(call, true).await
    }

    /// One call; `may_redirect` is false for a call another one handed on,
    /// which may not hand itself on again.
    async fn invoke_at(&self, call: ToolCall, may_redirect: bool) -> ToolResult {
        let started_at_ms = self.time.now_unix_ms();
        let t0 = self.time.monotonic_ms();
        let skill = (self.lookup)(&call.skill_id);
        let (facts, input_errors) = match &skill {
            Some(s) => (
                self.executor.assess(s, &call),
                validate(&s.input_schema, &call.arguments),
            ),
            None => (CallFacts::default(), Vec::new()),
        };
        let mut cx = CallContext {
            call,
            skill,
            facts,
            input_errors,
            started_at_ms,
            decision: None,
        };

        let mut result = None;
        for guard in &self.guards {
            if let Some(r) = guard.check(&cx).await {
                result = Some(r);
                break;
            }
        }
        if result.is_none() {
            result = self.permission.before(&mut cx).await;
        }
        if result.is_none() {
            for hook in &self.hooks {
                if let Some(r) = hook.before(&mut cx).await {
                    result = Some(r);
                    break;
                }
            }
        }
        // The before-hooks are where a call waits for its approval; that
        // wait is kept apart so a duration is the skill's own time (the
        // hooks' own checks take microseconds and count as neither).
        let t1 = self.time.monotonic_ms();
        let asked = cx
            .decision
            .as_ref()
            .is_some_and(|d| d.by == DecidedBy::User);
        let mut waited = if asked {
            Some((t1 - t0).max(0.0))
        } else {
            None
        };
        let mut result = match result {
            Some(r) => r,
            None => self.run(&cx, may_redirect).await,
        };
        let mut ran = (self.time.monotonic_ms() - t1).max(0.0);
        // A call handed on waited for the approval of the call it became;
        // that wait is not run time either.
        if let Some(inner) = result.wait_ms.take() {
            ran = (ran - inner).max(0.0);
            waited = Some(waited.unwrap_or(0.0) + inner);
        }
        result.started_at_ms = started_at_ms;
        result.duration_ms = ran;
        result.wait_ms = waited;
        if result.decision.is_none() {
            result.decision = cx.decision.clone();
        }
        for hook in self.hooks.iter().rev() {
            hook.after(&cx, &mut result).await;
        }
        result
    }

    async fn run(&self, cx: &CallContext, may_redirect: bool) -> ToolResult {
        let call = &cx.call;
        let Some(skill) = &cx.skill else {
            return ToolResult::failed(
                call,
                format!("there is no skill called '{}'", call.skill_id),
            );
        };
        if let Some(message) = cx.input_error_message() {
            return ToolResult::failed(call, message);
        }
        match self.executor.redirect(skill, call) {
            None => {}
            Some(_) if !may_redirect => {
                return ToolResult::failed(
                    call,
                    format!("{} cannot hand on a call it was handed", skill.name),
                );
            }
            Some(Err(e)) => return ToolResult::failed(call, e.message),
            Some(Ok(inner)) => {
                let done = Box::pin(self.invoke_at(inner, false)).await;
                let mut r = ToolResult::for_call(call, done.status);
                r.content = done.content;
                r.error = done.error;
                r.error_code = done.error_code;
                r.undo = done.undo;
                r.wait_ms = done.wait_ms;
                return r;
            }
        }
        // A panic in a handler must not take the app down. Where the
        // platform unwinds (native), it is caught here; on wasm32 panics
        // abort, so handlers there must return errors instead.
        let attempt = std::panic::AssertUnwindSafe(self.executor.execute(skill, call))
            .catch_unwind()
            .await;
        match attempt {
            Err(panic) => {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                ToolResult::failed(call, format!("{} crashed: {what}", skill.name))
            }
            Ok(Err(e)) => ToolResult::from_error(call, e),
            Ok(Ok(output)) => {
                if let Some(structured) = &output.structured {
                    let errors = validate(&skill.output_schema, structured);
                    if !errors.is_empty() {
                        let list: Vec<String> = errors.iter().map(ToString::to_string).collect();
                        return ToolResult::failed(
                            call,
                            format!(
                                "{} returned an invalid result: {}",
                                skill.name,
                                list.join("; ")
                            ),
                        );
                    }
                }
                let mut r = ToolResult::for_call(call, ToolStatus::Completed);
                r.content = output.content;
                r.undo = output.undo;
                r
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skill::approval::{MemoryPolicy, NobodyToAsk};
    use crate::skill::call::{CallOrigin, Content};
    use crate::skill::permission::PermissionSettings;
    use crate::skill::{Category, Tier};
    use crate::testing::{self, FakeClock};
    use futures::executor::block_on;
    use serde_json::{Value, json};
    use std::cell::{Cell, RefCell};

    /// Echoes `text`, panics on "boom", fails on "fail", and returns an
    /// output that breaks the schema on "bad-output".
    struct Echo;
    impl Executor for Echo {
        fn execute<'a>(
            &'a self,
            _skill: &'a SkillDefinition,
            call: &'a ToolCall,
        ) -> LocalBoxFuture<'a, Result<SkillOutput, SkillError>> {
            async move {
                let text = call.arguments["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                match text.as_str() {
                    "boom" => panic!("handler exploded"),
                    "fail" => Err(SkillError::new("it failed on purpose")),
                    "more" => Err(SkillError::input_required("which one?")),
                    "bad-output" => Ok(SkillOutput::text_and_json("x", json!({"echo": 5}))),
                    _ => Ok(SkillOutput::text_and_json(
                        text.clone(),
                        json!({"echo": text}),
                    )),
                }
            }
            .boxed_local()
        }
    }

    /// Records the order hooks run in, and short-circuits when told to.
    struct Tracer {
        name: &'static str,
        log: Rc<RefCell<Vec<String>>>,
        stop: bool,
    }
    impl Hook for Tracer {
        fn before<'a>(&'a self, cx: &'a mut CallContext) -> LocalBoxFuture<'a, Option<ToolResult>> {
            async move {
                self.log.borrow_mut().push(format!("before {}", self.name));
                self.stop
                    .then(|| ToolResult::denied(&cx.call, format!("stopped by {}", self.name)))
            }
            .boxed_local()
        }
        fn after<'a>(
            &'a self,
            _cx: &'a CallContext,
            r: &'a mut ToolResult,
        ) -> LocalBoxFuture<'a, ()> {
            async move {
                self.log.borrow_mut().push(format!(
                    "after {} saw {}",
                    self.name,
                    r.status.as_str()
                ));
            }
            .boxed_local()
        }
    }

    fn echo_skill() -> SkillDefinition {
        SkillDefinition::new(
            SkillId::new("echo").unwrap(),
            "Echo",
            Tier::Core,
            Category::Developer,
        )
        .with_input_schema(json!({
            "type": "object",
            "properties": {"text": {"type": "string", "maxLength": 100}},
            "required": ["text"]
        }))
        .with_output_schema(json!({
            "type": "object",
            "properties": {"echo": {"type": "string"}},
            "required": ["echo"]
        }))
    }

    fn invoker(hooks: Vec<Rc<dyn Hook>>) -> Invoker {
        let mut inv = Invoker::new(
            |id| (id.as_str() == "echo").then(echo_skill),
            Rc::new(Echo),
            Rc::new(FakeClock::at(1_000.0).stepping(5.0)),
            Rc::new(PermissionHook::new(
                Rc::new(MemoryPolicy::new(PermissionSettings::default())),
                Rc::new(NobodyToAsk),
            )),
        );
        for h in hooks {
            inv = inv.with_hook(h);
        }
        inv
    }

    fn call(skill: &str, args: Value) -> ToolCall {
        testing::call(skill)
            .id("c1")
            .args(args)
            .in_conversation("conv")
            .origin(CallOrigin::User)
            .build()
    }

    fn outcome(r: &ToolResult) -> String {
        format!(
            "{} {}",
            r.status.as_str(),
            r.error.clone().unwrap_or_else(|| r.to_model_text())
        )
    }

    #[test]
    fn every_failure_is_a_result() {
        let inv = invoker(vec![]);
        let cases = [
            (
                "echo",
                json!({"text": "hi"}),
                "completed hi\n{\"echo\":\"hi\"}",
            ),
            ("nope", json!({}), "failed there is no skill called 'nope'"),
            (
                "echo",
                json!({}),
                "failed invalid input: 'text': is required but missing (required)",
            ),
            (
                "echo",
                json!({"text": "x".repeat(1_000_000)}),
                "failed invalid input: 'text': must have at most 100 characters, has 1000000 (maxLength)",
            ),
            (
                "echo",
                json!({"text": "fail"}),
                "failed it failed on purpose",
            ),
            ("echo", json!({"text": "more"}), "input-required which one?"),
            (
                "echo",
                json!({"text": "boom"}),
                "failed Echo crashed: handler exploded",
            ),
            (
                "echo",
                json!({"text": "bad-output"}),
                "failed Echo returned an invalid result: 'echo': expected a string, got a number (type)",
            ),
        ];
        for (skill, args, want) in cases {
            let r = block_on(inv.invoke(call(skill, args.clone())));
            assert_eq!(outcome(&r), want, "{skill} {args}");
            assert_eq!(
                (r.id.as_str(), r.conversation_id.as_deref()),
                ("c1", Some("conv"))
            );
            assert_eq!((r.started_at_ms, r.duration_ms), (1_000.0, 5.0));
        }
    }

    #[test]
    fn hooks_run_in_order_and_can_short_circuit() {
        let log = Rc::new(RefCell::new(Vec::new()));
        let hook = |name, stop| -> Rc<dyn Hook> {
            Rc::new(Tracer {
                name,
                log: log.clone(),
                stop,
            })
        };
        let inv = invoker(vec![hook("a", false), hook("b", false)]);
        let r = block_on(inv.invoke(call("echo", json!({"text": "hi"}))));
        assert_eq!(r.status, ToolStatus::Completed);
        assert_eq!(
            log.take(),
            [
                "before a",
                "before b",
                "after b saw completed",
                "after a saw completed"
            ]
        );

        let inv = invoker(vec![hook("a", false), hook("gate", true), hook("c", false)]);
        let r = block_on(inv.invoke(call("echo", json!({"text": "hi"}))));
        assert_eq!(outcome(&r), "denied stopped by gate");
        assert_eq!(
            log.take(),
            [
                "before a",
                "before gate",
                "after c saw denied",
                "after gate saw denied",
                "after a saw denied"
            ],
            "later before-hooks and the skill never run; every after-hook does"
        );
    }

    /// Ends every call, and counts how often it was asked.
    struct Closed(Rc<Cell<u32>>);
    impl Guard for Closed {
        fn check<'a>(&'a self, cx: &'a CallContext) -> LocalBoxFuture<'a, Option<ToolResult>> {
            self.0.set(self.0.get() + 1);
            async move { Some(ToolResult::failed(&cx.call, "offline")) }.boxed_local()
        }
    }

    /// Says how often the skill ran.
    struct Counted(Rc<Cell<u32>>);
    impl Executor for Counted {
        fn execute<'a>(
            &'a self,
            _skill: &'a SkillDefinition,
            _call: &'a ToolCall,
        ) -> LocalBoxFuture<'a, Result<SkillOutput, SkillError>> {
            self.0.set(self.0.get() + 1);
            async { Ok(SkillOutput::text("ran")) }.boxed_local()
        }
    }

    #[test]
    fn every_invoker_decides_permission_before_anything_runs() {
        // The permission hook is part of every invoker: a skill switched
        // off in its settings never runs, with no other hook added, and
        // every result says how permission was settled.
        let ran = Rc::new(Cell::new(0));
        let mut off = PermissionSettings::default();
        off.skills.insert(
            "echo".into(),
            crate::skill::permission::SkillSettings {
                enabled: Some(false),
                approval: None,
            },
        );
        let inv = Invoker::new(
            |id| (id.as_str() == "echo").then(echo_skill),
            Rc::new(Counted(ran.clone())),
            Rc::new(FakeClock::at(1_000.0).stepping(5.0)),
            Rc::new(PermissionHook::new(
                Rc::new(MemoryPolicy::new(off)),
                Rc::new(NobodyToAsk),
            )),
        );
        let r = block_on(inv.invoke(call("echo", json!({"text": "hi"}))));
        assert_eq!(r.status, ToolStatus::Denied);
        assert_eq!(ran.get(), 0);
        assert_eq!(
            r.decision.map(|d| d.outcome),
            Some(crate::skill::permission::Verdict::Denied)
        );

        // Allowed calls carry the decision too.
        let r = block_on(invoker(vec![]).invoke(call("echo", json!({"text": "hi"}))));
        assert_eq!(
            r.decision.map(|d| d.outcome),
            Some(crate::skill::permission::Verdict::Allowed)
        );
    }

    #[test]
    fn guards_run_before_the_permission_decision_and_can_only_end_a_call() {
        let checked = Rc::new(Cell::new(0));
        let ran = Rc::new(Cell::new(0));
        let inv = Invoker::new(
            |id| (id.as_str() == "echo").then(echo_skill),
            Rc::new(Counted(ran.clone())),
            Rc::new(FakeClock::at(1_000.0).stepping(5.0)),
            Rc::new(PermissionHook::new(
                Rc::new(MemoryPolicy::new(PermissionSettings {
                    mode: crate::skill::permission::PermissionMode::AskEverything,
                    ..PermissionSettings::default()
                })),
                Rc::new(NobodyToAsk),
            )),
        )
        .with_guard(Rc::new(Closed(checked.clone())));
        let r = block_on(inv.invoke(call("echo", json!({"text": "hi"}))));
        // The guard ended the call, so nobody was asked (the approver here
        // would have denied) and nothing ran.
        assert_eq!(outcome(&r), "failed offline");
        assert_eq!((checked.get(), ran.get()), (1, 0));
        assert_eq!(r.decision, None);
    }

    #[test]
    fn results_carry_content_kinds() {
        let r = block_on(invoker(vec![]).invoke(call("echo", json!({"text": "yo"}))));
        assert_eq!(
            r.content,
            vec![
                Content::Text { text: "yo".into() },
                Content::Json {
                    value: json!({"echo": "yo"})
                }
            ]
        );
    }
}
