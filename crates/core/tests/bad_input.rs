//! Malformed, oversized and strange input through the one call path:
//! every case is a `failed` result with a clear message, and the data the
//! skill guards is unchanged.

use std::cell::RefCell;
use std::rc::Rc;

use futures::FutureExt;
use futures::executor::block_on;
use futures::future::LocalBoxFuture;
use hearth_core::builtin::collection::Stamp;
use hearth_core::builtin::notes::{self, Notebook};
use hearth_core::skill::approval::{MemoryPolicy, NobodyToAsk, PermissionHook};
use hearth_core::skill::invoke::{Executor, Invoker};
use hearth_core::skill::permission::PermissionSettings;
use hearth_core::testing::{self, FakeClock};
use hearth_core::{SkillDefinition, SkillError, SkillOutput, ToolCall, ToolStatus};
use serde_json::{Value, json};

/// The notes skill over an in-memory notebook, applying changes the way
/// the app does: only after the action succeeded.
struct NotesOnly(Rc<RefCell<Notebook>>);
impl Executor for NotesOnly {
    fn execute<'a>(
        &'a self,
        _: &'a SkillDefinition,
        call: &'a ToolCall,
    ) -> LocalBoxFuture<'a, Result<SkillOutput, SkillError>> {
        async move {
            let action = notes::parse(&call.arguments)?;
            let stamp = Stamp {
                now_ms: 1.0,
                new_id: format!("id-{}", call.id),
                today: (2026, 11, 21),
            };
            let (out, changes) = notes::run(&self.0.borrow(), action, &stamp)?;
            self.0.borrow_mut().apply(&changes);
            Ok(out)
        }
        .boxed_local()
    }
}

fn setup() -> (Invoker, Rc<RefCell<Notebook>>) {
    let book = Rc::new(RefCell::new(Notebook::default()));
    let invoker = Invoker::new(
        |id| (id.as_str() == "notes").then(notes::definition),
        Rc::new(NotesOnly(book.clone())),
        Rc::new(FakeClock::at(0.0)),
        Rc::new(PermissionHook::new(
            Rc::new(MemoryPolicy::new(PermissionSettings::default())),
            Rc::new(NobodyToAsk),
        )),
    );
    (invoker, book)
}

fn call(id: &str, args: Value) -> ToolCall {
    testing::call("notes").id(id).args(args).build()
}

#[test]
fn hostile_arguments_fail_cleanly_and_change_nothing() {
    let (invoker, book) = setup();
    let ok = block_on(invoker.invoke(call(
        "seed",
        json!({"action": "create", "title": "Keep me", "body": "safe"}),
    )));
    assert_eq!(ok.status, ToolStatus::Completed);

    let mut deep = json!("bottom");
    for _ in 0..120 {
        deep = json!([deep]);
    }
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "huge title",
            json!({"action": "create", "title": "x".repeat(1_000_000)}),
            "'title': must have at most 500 characters, has 1000000 (maxLength)",
        ),
        (
            "huge body",
            json!({"action": "create", "title": "t", "body": "é".repeat(1_000_001)}),
            "'body': must have at most 200000 characters, has 1000001 (maxLength)",
        ),
        (
            "wrong type",
            json!({"action": "create", "title": 42}),
            "'title': expected a string, got a number (type)",
        ),
        (
            "tags not a list",
            json!({"action": "create", "title": "t", "tags": "home"}),
            "'tags': expected an array, got a string (type)",
        ),
        (
            "unknown field",
            json!({"action": "create", "title": "t", "colour": "red"}),
            "'colour': is not an allowed field (additionalProperties)",
        ),
        (
            "deep nesting",
            json!({"action": "create", "title": "t", "tags": deep}),
            "'tags/0': expected a string, got an array (type)",
        ),
        (
            "not an object",
            json!(["create"]),
            "the input: expected an object, got an array (type)",
        ),
        (
            "no action",
            json!({"title": "t"}),
            "'action': is required but missing (required)",
        ),
    ];
    for (name, args, want) in cases {
        let r = block_on(invoker.invoke(call(name, args)));
        assert_eq!(r.status, ToolStatus::Failed, "{name}");
        let err = r.error.unwrap_or_default();
        assert!(err.contains(want), "{name}: {err}");
    }
    let b = book.borrow();
    assert_eq!(b.len(), 1);
    assert_eq!(b.get("id-seed").unwrap().body, "safe");
}

#[test]
fn unicode_edge_cases_are_kept_exactly() {
    let (invoker, book) = setup();
    let weird = [
        "emoji 👩🏽‍💻 family 👨‍👩‍👧",
        "right-to-left \u{202E} override",
        "zero\u{200B}width\u{FEFF}joiners",
        "combining e\u{0301} vs é",
        "nul \u{0000} inside",
        "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 astral",
        "\r\n mixed \n line \r endings",
    ];
    for (i, text) in weird.iter().enumerate() {
        let r = block_on(invoker.invoke(call(
            &format!("u{i}"),
            json!({"action": "create", "title": text, "body": text, "tags": [text]}),
        )));
        assert_eq!(r.status, ToolStatus::Completed, "{text:?}");
        let b = book.borrow();
        let n = b.get(&format!("id-u{i}")).unwrap();
        assert_eq!(n.body, *text);
        assert_eq!(n.title, text.trim());
    }
    // Searching with a query made only of separators finds nothing and does not fail.
    let r = block_on(invoker.invoke(call(
        "s",
        json!({"action": "search", "query": "\u{200B}\u{202E} "}),
    )));
    assert_eq!(r.status, ToolStatus::Completed);
}
