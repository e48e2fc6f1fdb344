//! MCP servers' tools as a source of skills for the app's call path: the
//! connected servers' clients (core's `McpExecutor`), the call itself, and
//! the server's original answer kept for a while by call id, because an
//! MCP App wants the exact `CallToolResult` (its `structuredContent` is not
//! all in the skill result). It sits below both the runtime, which runs
//! calls through it, and the MCP service (`crate::mcp`), which connects
//! servers and registers their tools through the runtime.

use std::cell::RefCell;
use std::collections::VecDeque;

use futures::FutureExt;
use futures::future::LocalBoxFuture;
use hearth_core::mcp::CallOptions;
use hearth_core::mcp::model::CallToolResult;
use hearth_core::mcp::skills::{McpExecutor, to_skill_error, to_skill_output};
use hearth_core::source::SkillSource;
use hearth_core::{
    Registry, SkillDefinition, SkillError, SkillKind, SkillOutput, SourceKey, ToolCall,
};

/// How many original answers are kept.
const KEPT: usize = 64;

#[derive(Default)]
pub struct McpSkills {
    clients: McpExecutor,
    answers: RefCell<VecDeque<(String, CallToolResult)>>,
}

impl McpSkills {
    pub fn new() -> Self {
        Self::default()
    }

    /// The connected servers' clients.
    pub fn clients(&self) -> &McpExecutor {
        &self.clients
    }

    /// The server's own answer to call `call_id`, if still kept.
    pub fn answer(&self, call_id: &str) -> Option<CallToolResult> {
        self.answers
            .borrow()
            .iter()
            .find(|(id, _)| id == call_id)
            .map(|(_, r)| r.clone())
    }

    fn keep(&self, call_id: &str, result: &CallToolResult) {
        let mut answers = self.answers.borrow_mut();
        if answers.len() >= KEPT {
            answers.pop_front();
        }
        answers.push_back((call_id.to_string(), result.clone()));
    }
}

impl SkillSource for McpSkills {
    fn key(&self) -> SourceKey {
        SourceKey::Mcp
    }

    /// None at start: a server's tools register when it connects
    /// (`crate::mcp`), under this source's key.
    fn definitions(&self, _registry: &Registry) -> Vec<SkillDefinition> {
        Vec::new()
    }

    fn execute<'a>(
        &'a self,
        skill: &'a SkillDefinition,
        call: &'a ToolCall,
    ) -> LocalBoxFuture<'a, Result<SkillOutput, SkillError>> {
        async move {
            let (server, tool) = match &skill.kind {
                SkillKind::Mcp { server, tool } => (server, tool),
                SkillKind::Builtin | SkillKind::AgentSkill { .. } => {
                    return Err(SkillError::new(format!("{} is not an MCP skill", skill.id)));
                }
            };
            let client = self.clients.client(server).ok_or_else(|| {
                SkillError::new(format!(
                    "the MCP server {server} is not connected; turn it on in the Servers panel"
                ))
            })?;
            let result = client
                .call_tool(
                    tool,
                    call.arguments.clone(),
                    CallOptions {
                        progress: true,
                        cancel: None,
                    },
                )
                .await
                .map_err(|e| to_skill_error(server, e))?;
            self.keep(&call.id, &result);
            to_skill_output(result)
        }
        .boxed_local()
    }
}
