//! MCP servers' tools as a source of skills for the app's call path: the
//! connected servers' clients and the call (core's `McpExecutor`, the one
//! `tools/call` path, here through the MCP chunk), and
//! the server's original answer kept for a while by call id, because an
//! MCP App wants the exact `CallToolResult` (its `structuredContent` is not
//! all in the skill result). It sits below both the runtime, which runs
//! calls through it, and the MCP service (`crate::mcp`), which connects
//! servers, registers their tools through the runtime and hands their
//! catalogs here, so the assistant's prompt carries the instructions of
//! the servers whose tools a request offers.

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

use futures::FutureExt;
use futures::future::LocalBoxFuture;
use hearth_core::mcp::model::CallToolResult;
use hearth_core::mcp::skills::{
    CALL_OPTIONS, CallFailure, McpExecutor, ServerCatalog, ServerId, instructions_for_loaded,
    to_skill_output,
};
use hearth_core::mcp::{McpClient, McpError};
use hearth_core::skill::source::{SkillSource, Turn};
use hearth_core::{Registry, SkillDefinition, SkillError, SkillOutput, SourceKey, ToolCall};
use serde_json::Value;

use crate::split::{LoadError, split_point};

/// How many original answers are kept.
const KEPT: usize = 64;

pub struct McpSkills {
    clients: McpExecutor,
    answers: RefCell<VecDeque<(String, CallToolResult)>>,
    /// The connected servers' catalogs (their instructions included).
    catalogs: RefCell<BTreeMap<ServerId, ServerCatalog>>,
}

impl Default for McpSkills {
    fn default() -> Self {
        McpSkills {
            clients: McpExecutor::with_caller(Rc::new(call_tool)),
            answers: RefCell::default(),
            catalogs: RefCell::default(),
        }
    }
}

impl McpSkills {
    pub fn new() -> Self {
        Self::default()
    }

    /// The connected servers' clients.
    pub fn clients(&self) -> &McpExecutor {
        &self.clients
    }

    /// Puts in (or with `None`, takes out) a server's catalog.
    pub fn set_catalog(&self, server: &ServerId, catalog: Option<ServerCatalog>) {
        let mut catalogs = self.catalogs.borrow_mut();
        match catalog {
            Some(c) => {
                catalogs.insert(server.clone(), c);
            }
            None => {
                catalogs.remove(server);
            }
        }
    }

    /// The instructions of the servers some of whose tools are in
    /// `offered`, for the system prompt.
    pub fn instructions_for(&self, offered: &[SkillDefinition]) -> Option<String> {
        let catalogs: Vec<ServerCatalog> = self.catalogs.borrow().values().cloned().collect();
        instructions_for_loaded(&catalogs, offered)
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
            let result = self.clients.call_tool(skill, call).await?;
            self.keep(&call.id, &result);
            to_skill_output(result)
        }
        .boxed_local()
    }

    fn turn_prompt(&self, _turn: &Turn, offered: &[SkillDefinition]) -> Option<String> {
        self.instructions_for(offered)
    }
}

/// What a person sees when the MCP client's code did not arrive.
pub fn not_loaded() -> String {
    crate::split::not_loaded("MCP servers")
}

// A tool call runs the client's request code, which lives in the MCP
// chunk with the rest of the client (see `crate::mcp`).
split_point!(
    mcp,
    fn call_tool_in_chunk(
        client: McpClient,
        tool: String,
        arguments: Value,
    ) -> LocalBoxFuture<'static, Result<CallToolResult, McpError>> {
        Box::pin(async move { client.call_tool(&tool, arguments, CALL_OPTIONS).await })
    }
);

/// `tools/call` on `client`, through the chunk.
fn call_tool(
    client: McpClient,
    tool: String,
    arguments: Value,
) -> LocalBoxFuture<'static, Result<CallToolResult, CallFailure>> {
    Box::pin(async move {
        match call_tool_in_chunk(client, tool, arguments).await {
            Ok(calling) => calling.await.map_err(CallFailure::Mcp),
            Err(LoadError) => Err(CallFailure::NotLoaded(not_loaded())),
        }
    })
}
