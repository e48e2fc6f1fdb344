//! What wraps every call on the call path: the context hooks and guards
//! see, and the two kinds of wrapper. A [`Guard`] runs before the
//! permission decision and can only end a call; a [`Hook`] runs after it
//! and sees every result. The permission hook itself is not one of these:
//! [`crate::skill::invoke::Invoker::new`] takes it as a required part.

use futures::FutureExt;
use futures::future::LocalBoxFuture;

use crate::schema::ValidationError;
use crate::skill::SkillDefinition;
use crate::skill::call::{ToolCall, ToolResult};
use crate::skill::permission::{CallFacts, DecisionRecord};

/// What hooks see about the call in flight.
#[derive(Clone, Debug)]
pub struct CallContext {
    pub call: ToolCall,
    /// `None` when no skill has the call's id.
    pub skill: Option<SkillDefinition>,
    pub facts: CallFacts,
    /// Problems with the input; the executor does not run when non-empty.
    pub input_errors: Vec<ValidationError>,
    pub started_at_ms: f64,
    /// How permission was settled; set by the permission hook and copied
    /// onto the result.
    pub decision: Option<DecisionRecord>,
}

impl CallContext {
    pub fn input_error_message(&self) -> Option<String> {
        if self.input_errors.is_empty() {
            return None;
        }
        let list: Vec<String> = self.input_errors.iter().map(ToString::to_string).collect();
        Some(format!("invalid input: {}", list.join("; ")))
    }
}

/// Something that wraps every call.
pub trait Hook {
    /// Runs before the skill. Returning a result ends the call there.
    fn before<'a>(&'a self, _cx: &'a mut CallContext) -> LocalBoxFuture<'a, Option<ToolResult>> {
        async { None }.boxed_local()
    }

    /// Runs after the call on every result, including short-circuited ones.
    fn after<'a>(
        &'a self,
        _cx: &'a CallContext,
        _result: &'a mut ToolResult,
    ) -> LocalBoxFuture<'a, ()> {
        async {}.boxed_local()
    }
}

/// A check ahead of the permission decision that can only end a call (the
/// app's offline check, so nobody is asked about a call that cannot work).
/// It sees the call but cannot change it: what the permission layer decides
/// on is what the call path looked up and validated.
pub trait Guard {
    fn check<'a>(&'a self, cx: &'a CallContext) -> LocalBoxFuture<'a, Option<ToolResult>>;
}
