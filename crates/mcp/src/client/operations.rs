//! The typed operations: paged lists within their limits (tools,
//! resources, templates, prompts), and calling a tool, reading a resource
//! and getting a prompt.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::error::McpError;
use crate::headers::{self, ParamHeaderError};
use crate::model::{
    CallToolResult, GetPromptResult, Page, Prompt, ReadResourceResult, Resource, ResourceTemplate,
    Tool,
};
use crate::version::Era;

use super::{CallOptions, McpClient};

/// Pages beyond this are not fetched; a server that keeps paging is broken.
pub const MAX_PAGES: usize = 1000;
/// The most items one listing (all its pages together) may hold. A
/// server with more is not listed at all: every list is kept in memory and
/// listed again on each change notification.
pub const MAX_LIST_ITEMS: usize = 10_000;
/// The most bytes of JSON the items of one listing may take, all pages
/// together (each page is also capped, at [`crate::stream::MAX_MESSAGE_BYTES`]).
pub const MAX_LIST_BYTES: usize = 16 * 1024 * 1024;

/// Tools from `tools/list`, and those refused with the reason.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolListing {
    pub tools: Vec<Tool>,
    /// Tools whose `x-mcp-header` annotations break the rules; the spec
    /// requires leaving them out.
    pub rejected: Vec<(String, ParamHeaderError)>,
}

impl McpClient {
    async fn list_page(
        &self,
        method: &str,
        cursor: Option<&str>,
    ) -> Result<(Value, Option<String>), McpError> {
        let mut params = Map::new();
        if let Some(c) = cursor {
            params.insert("cursor".into(), c.into());
        }
        let value = self.request(method, params, CallOptions::default()).await?;
        let next = value
            .get("nextCursor")
            .and_then(Value::as_str)
            .filter(|c| !c.is_empty())
            .map(str::to_string);
        Ok((value, next))
    }

    /// Every item of a paginated list, following cursors, within
    /// [`MAX_LIST_ITEMS`] and [`MAX_LIST_BYTES`] in all.
    async fn list_all(&self, method: &str, key: &str) -> Result<Vec<Value>, McpError> {
        let mut items = Vec::new();
        let mut bytes = 0usize;
        let mut cursor: Option<String> = None;
        let mut seen: Vec<String> = Vec::new();
        for _ in 0..MAX_PAGES {
            let (value, next) = self.list_page(method, cursor.as_deref()).await?;
            match value.get(key) {
                Some(Value::Array(list)) => {
                    bytes = bytes.saturating_add(list.iter().map(json_size).sum());
                    if items.len() + list.len() > MAX_LIST_ITEMS {
                        return Err(McpError::TooLarge(format!(
                            "{method} lists more than {MAX_LIST_ITEMS} items"
                        )));
                    }
                    if bytes > MAX_LIST_BYTES {
                        return Err(McpError::TooLarge(format!(
                            "{method} lists more than {} MB",
                            MAX_LIST_BYTES / (1024 * 1024)
                        )));
                    }
                    items.extend(list.iter().cloned())
                }
                Some(_) | None => {
                    return Err(McpError::Malformed(format!(
                        "{method} result has no \"{key}\" list"
                    )));
                }
            }
            match next {
                None => return Ok(items),
                Some(c) if seen.contains(&c) => {
                    return Err(McpError::Protocol(format!(
                        "{method} repeated the page cursor {c:?}"
                    )));
                }
                Some(c) => {
                    seen.push(c.clone());
                    cursor = Some(c);
                }
            }
        }
        Err(McpError::Protocol(format!(
            "{method} has more than {MAX_PAGES} pages"
        )))
    }

    /// One page of tools, for callers that page themselves.
    pub async fn list_tools_page(&self, cursor: Option<&str>) -> Result<Page<Tool>, McpError> {
        let (value, next_cursor) = self.list_page("tools/list", cursor).await?;
        let tools = parse_list(&value, "tools")?;
        Ok(Page {
            items: tools,
            next_cursor,
            ttl_ms: value.get("ttlMs").and_then(Value::as_u64),
        })
    }

    /// All tools, with invalid ones set aside (see [`ToolListing`]).
    pub async fn list_tools(&self) -> Result<ToolListing, McpError> {
        let raw = self.list_all("tools/list", "tools").await?;
        let check_headers = self.era() == Era::Modern;
        let mut tools = Vec::new();
        let mut rejected = Vec::new();
        let mut tool_headers = HashMap::new();
        for item in raw {
            let tool: Tool = serde_json::from_value(item)
                .map_err(|e| McpError::Malformed(format!("a tool in tools/list: {e}")))?;
            if check_headers {
                match headers::param_headers(&tool.input_schema) {
                    Ok(hs) => {
                        if !hs.is_empty() {
                            tool_headers.insert(tool.name.clone(), hs);
                        }
                    }
                    Err(e) => {
                        rejected.push((tool.name.clone(), e));
                        continue;
                    }
                }
            }
            tools.push(tool);
        }
        {
            let mut s = self.inner.state.borrow_mut();
            s.tool_headers = tool_headers;
            s.tools_listed = true;
        }
        Ok(ToolListing { tools, rejected })
    }

    /// Calls a tool. A tool's own failure is a result with `is_error`, not
    /// an `Err`.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        options: CallOptions,
    ) -> Result<CallToolResult, McpError> {
        self.ensure_connected().await?;
        if self.era() == Era::Modern && !self.inner.state.borrow().tools_listed {
            // The Mcp-Param-* headers come from the tool's schema.
            let listing = self.list_tools().await?;
            if let Some((_, why)) = listing.rejected.iter().find(|(n, _)| n == name) {
                return Err(McpError::Protocol(format!(
                    "the tool {name} is invalid: {why}"
                )));
            }
        }
        let mut params = Map::new();
        params.insert("name".into(), name.into());
        params.insert("arguments".into(), arguments);
        let value = self
            .request_with_input("tools/call", params, options)
            .await?;
        serde_json::from_value(value)
            .map_err(|e| McpError::Malformed(format!("tools/call result: {e}")))
    }

    pub async fn list_resources(&self) -> Result<Vec<Resource>, McpError> {
        let raw = self.list_all("resources/list", "resources").await?;
        parse_items(raw, "resources/list")
    }

    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, McpError> {
        let raw = self
            .list_all("resources/templates/list", "resourceTemplates")
            .await?;
        parse_items(raw, "resources/templates/list")
    }

    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, McpError> {
        let mut params = Map::new();
        params.insert("uri".into(), uri.into());
        let value = self
            .request_with_input("resources/read", params, CallOptions::default())
            .await?;
        serde_json::from_value(value)
            .map_err(|e| McpError::Malformed(format!("resources/read result: {e}")))
    }

    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, McpError> {
        let raw = self.list_all("prompts/list", "prompts").await?;
        parse_items(raw, "prompts/list")
    }

    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
    ) -> Result<GetPromptResult, McpError> {
        let mut params = Map::new();
        params.insert("name".into(), name.into());
        if !arguments.is_empty() {
            params.insert("arguments".into(), Value::Object(arguments.clone()));
        }
        let value = self
            .request_with_input("prompts/get", params, CallOptions::default())
            .await?;
        serde_json::from_value(value)
            .map_err(|e| McpError::Malformed(format!("prompts/get result: {e}")))
    }
}

/// About how many bytes `value` takes as JSON, counted without writing it.
fn json_size(value: &Value) -> usize {
    match value {
        Value::Null => 4,
        Value::Bool(_) => 5,
        Value::Number(_) => 8,
        Value::String(s) => s.len() + 2,
        Value::Array(items) => 2 + items.iter().map(|v| json_size(v) + 1).sum::<usize>(),
        Value::Object(map) => {
            2 + map
                .iter()
                .map(|(k, v)| k.len() + 4 + json_size(v))
                .sum::<usize>()
        }
    }
}

fn parse_list<T: serde::de::DeserializeOwned>(
    value: &Value,
    key: &str,
) -> Result<Vec<T>, McpError> {
    match value.get(key) {
        Some(Value::Array(list)) => parse_items(list.clone(), key),
        Some(_) | None => Err(McpError::Malformed(format!(
            "the result has no \"{key}\" list"
        ))),
    }
}

fn parse_items<T: serde::de::DeserializeOwned>(
    raw: Vec<Value>,
    what: &str,
) -> Result<Vec<T>, McpError> {
    raw.into_iter()
        .map(|v| {
            serde_json::from_value(v)
                .map_err(|e| McpError::Malformed(format!("an item of {what}: {e}")))
        })
        .collect()
}
