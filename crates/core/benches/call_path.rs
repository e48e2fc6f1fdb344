//! Benchmarks of the call path, printed as figures:
//! - the call path's own overhead per call (validate + decide + hooks +
//!   log write to an in-memory store), with a skill that does nothing;
//! - notes search over 10,000 notes.
//!
//! Run: cargo bench -p hearth-core --bench call_path

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Instant;

#[path = "support/figure.rs"]
mod figure;
use figure::figure;

use futures::FutureExt;
use futures::executor::block_on;
use futures::future::LocalBoxFuture;
use hearth_core::builtin::notes::{Note, Notebook, search};
use hearth_core::skill::activity::{ActivityHook, ActivityRecord, ActivityStore};
use hearth_core::skill::approval::{ApprovalAnswer, PermissionHook, PolicySource};
use hearth_core::skill::invoke::{Executor, Invoker, TimeSource};
use hearth_core::skill::permission::{PermissionSettings, Policy};
use hearth_core::testing::{self, ScriptedApprover};
use hearth_core::{CallOrigin, SkillDefinition, SkillError, SkillId, SkillOutput, ToolCall};
use serde_json::json;

struct Clock(Instant);
impl TimeSource for Clock {
    fn now_unix_ms(&self) -> f64 {
        0.0
    }
    fn monotonic_ms(&self) -> f64 {
        self.0.elapsed().as_secs_f64() * 1000.0
    }
}

struct Nothing;
impl Executor for Nothing {
    fn execute<'a>(
        &'a self,
        _: &'a SkillDefinition,
        _: &'a ToolCall,
    ) -> LocalBoxFuture<'a, Result<SkillOutput, SkillError>> {
        async {
            Ok(SkillOutput::text_and_json(
                "ok",
                json!({"expression": "1", "result": "1"}),
            ))
        }
        .boxed_local()
    }
}

struct Log(RefCell<Vec<ActivityRecord>>);
impl ActivityStore for Log {
    fn append<'a>(&'a self, r: &'a ActivityRecord) -> LocalBoxFuture<'a, Result<(), String>> {
        // Serialise as the browser store does, then keep it.
        let _ = serde_json::to_string(r);
        self.0.borrow_mut().push(r.clone());
        async { Ok(()) }.boxed_local()
    }
}

struct Defaults;
impl PolicySource for Defaults {
    fn policy(&self, skill: &SkillDefinition, _: &ToolCall) -> Policy {
        PermissionSettings::default().policy(skill)
    }
    fn always_allow<'a>(
        &'a self,
        _: &'a SkillId,
        _: &'a ToolCall,
    ) -> LocalBoxFuture<'a, Result<(), String>> {
        async { Ok(()) }.boxed_local()
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let calc = hearth_core::builtin::calculator();
    let invoker = Invoker::new(
        move |_| Some(calc.clone()),
        Rc::new(Nothing),
        Rc::new(Clock(Instant::now())),
        Rc::new(PermissionHook::new(
            Rc::new(Defaults),
            Rc::new(ScriptedApprover::always(ApprovalAnswer::Deny)),
        )),
    )
    .with_hook(Rc::new(ActivityHook::new(Rc::new(Log(RefCell::new(
        Vec::new(),
    ))))));
    let call = testing::call("calculator")
        .args(json!({"expression": "15% of 847"}))
        .origin(CallOrigin::User)
        .build();
    for _ in 0..1_000 {
        block_on(invoker.invoke(call.clone()));
    }
    let samples: Vec<f64> = (0..20_000)
        .map(|_| {
            let t = Instant::now();
            block_on(invoker.invoke(call.clone()));
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    println!(
        "call path overhead (native): median {:.2} µs per call over {} calls (goal in the browser: <= 1 ms)",
        median(samples.clone()),
        samples.len()
    );
    figure(
        "call path overhead, native (in-memory log)",
        median(samples.clone()),
        "µs",
        None,
        &format!(
            "median of {} calls of a skill that does nothing",
            samples.len()
        ),
    );

    let book = Notebook::new(hearth_core::builtin::notes::sample_notes(10_000));
    let t = Instant::now();
    search(&book, "warm up", 1);
    println!(
        "notes index build on first search, 10,000 notes (native): {:.0} ms",
        t.elapsed().as_secs_f64() * 1000.0
    );
    let queries = [
        "garden budget",
        "lisbon",
        "tram museum",
        "meeting notes",
        "recipe",
        "kalbo",
    ];
    let samples: Vec<f64> = (0..60)
        .map(|i| {
            let q = queries[i % queries.len()];
            let t = Instant::now();
            std::hint::black_box(search(&book, q, 10));
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    let med = median(samples);
    println!(
        "notes search over 10,000 realistic notes (native): median {med:.2} ms (goal in the browser: <= 50 ms)"
    );
    figure(
        "notes search over 10,000 notes, native",
        med,
        "ms",
        None,
        "median of 60 queries",
    );

    // Worst case: every note holds every query word.
    let words = [
        "garden", "tomato", "invoice", "meeting", "lisbon", "tram", "budget", "recipe",
    ];
    let same: Vec<Note> = (0..10_000)
        .map(|i| Note {
            id: format!("n{i}"),
            title: format!("Note {i} about {}", words[i % words.len()]),
            body: (0..80)
                .map(|j| words[(i * 7 + j * 13) % words.len()])
                .collect::<Vec<_>>()
                .join(" "),
            tags: vec![words[(i * 3) % words.len()].to_string()],
            created_ms: i as f64,
            updated_ms: i as f64,
        })
        .collect();
    let worst = Notebook::new(same);
    let samples: Vec<f64> = (0..20)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(search(&worst, "garden budget", 10));
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    println!(
        "notes search, worst case (every one of 10,000 notes matches): median {:.2} ms",
        median(samples)
    );
}
