//! The running app's services: database, registry and the call path,
//! assembled once at start-up and shared through Leptos context.

use std::cell::RefCell;
use std::rc::Rc;

use futures::FutureExt;
use futures::future::LocalBoxFuture;
use hearth_core::activity::ActivityHook;
use hearth_core::invoke::{Executor, Invoker};
use hearth_core::{
    CallOrigin, Registry, SkillDefinition, SkillError, SkillKind, SkillOutput, ToolCall, ToolResult,
};
use leptos::prelude::*;
use send_wrapper::SendWrapper;

use crate::platform::{BrowserTime, local_clock, new_id};
use crate::storage::Db;

/// Runs skills in the browser, dispatching on their kind.
pub struct BrowserExecutor;

impl Executor for BrowserExecutor {
    fn execute<'a>(
        &'a self,
        skill: &'a SkillDefinition,
        call: &'a ToolCall,
    ) -> LocalBoxFuture<'a, Result<SkillOutput, SkillError>> {
        async move {
            match &skill.kind {
                SkillKind::Builtin => match skill.id.as_str() {
                    "calculator" => hearth_core::calculator::run(&call.arguments, local_clock()),
                    "run_javascript" | "run_python" => {
                        crate::sandbox::skill::run(skill, call).await
                    }
                    "read_file" | "list_files" | "search_files" => {
                        crate::files::skills::run(skill, call).await
                    }
                    other => Err(SkillError::new(format!(
                        "the built-in skill '{other}' has no implementation in this build"
                    ))),
                },
                SkillKind::AgentSkill { package, .. } => Err(SkillError::new(format!(
                    "skill package '{package}' cannot run yet"
                ))),
                SkillKind::Mcp { server, .. } => Err(SkillError::new(format!(
                    "MCP server '{server}' is not connected"
                ))),
            }
        }
        .boxed_local()
    }
}

pub struct Services {
    pub db: Rc<Db>,
    pub registry: Rc<RefCell<Registry>>,
    pub invoker: Invoker,
}

/// The handle components get from context.
#[derive(Clone)]
pub struct Runtime(SendWrapper<Rc<Services>>);

impl Runtime {
    pub fn new(db: Db) -> Result<Runtime, String> {
        let registry = hearth_core::builtin::registry().map_err(|e| e.to_string())?;
        let registry = Rc::new(RefCell::new(registry));
        let db = Rc::new(db);
        crate::files::install(db.clone());
        crate::sandbox::install(db.clone());
        let lookup = {
            let registry = registry.clone();
            move |id: &hearth_core::SkillId| registry.borrow().get(id).cloned()
        };
        let invoker = Invoker::new(lookup, Rc::new(BrowserExecutor), Rc::new(BrowserTime))
            .with_hook(Rc::new(ActivityHook::new(db.clone())));
        Ok(Runtime(SendWrapper::new(Rc::new(Services {
            db,
            registry,
            invoker,
        }))))
    }

    pub fn services(&self) -> &Services {
        &self.0
    }

    pub fn db(&self) -> Rc<Db> {
        self.0.db.clone()
    }

    pub fn registry(&self) -> std::cell::Ref<'_, Registry> {
        self.0.registry.borrow()
    }

    /// Runs one call through the whole call path.
    pub async fn invoke(
        &self,
        skill_id: hearth_core::SkillId,
        arguments: serde_json::Value,
        origin: CallOrigin,
    ) -> (ToolCall, ToolResult) {
        let call = ToolCall {
            id: new_id(),
            skill_id,
            arguments,
            conversation_id: None,
            origin,
        };
        let result = self.0.invoker.invoke(call.clone()).await;
        (call, result)
    }
}

pub fn use_runtime() -> Runtime {
    expect_context::<Runtime>()
}
