//! `hearth mcp conformance URL`: the client the official MCP conformance
//! suite drives (`npx @modelcontextprotocol/conformance client --command
//! "hearth mcp conformance"`). The suite appends the server URL and sets
//! `MCP_CONFORMANCE_SCENARIO`, `MCP_CONFORMANCE_PROTOCOL_VERSION` (which
//! fixes the era) and, for some scenarios, `MCP_CONFORMANCE_CONTEXT`.
//!
//! The client behaves as Hearth does: connect, sign in when challenged,
//! list the tools and call each one, then read the resources and get the
//! prompts the server offers. Arguments come from the context's
//! `toolCalls` when the scenario gives them, otherwise from each tool's
//! schema. One scenario needs a special step (echoing a listed schema
//! back); it is the only branch on the scenario name.

use std::process::ExitCode;
use std::rc::Rc;

use futures::FutureExt;
use futures::future::{Either, LocalBoxFuture, select};
use hearth_core::mcp::authorize::{OAuthConfig, OAuthFlow};
use hearth_core::mcp::client::{
    CallOptions, ClientConfig, EventSink, InputHandler, McpClient, ServerEvent,
};
use hearth_core::mcp::jsonrpc::{METHOD_NOT_FOUND, RpcError};
use hearth_core::mcp::model::{
    ClientCapabilities, ElicitAction, ElicitResult, InputRequest, SubscriptionFilter,
    apply_elicitation_defaults,
};
use hearth_core::mcp::oauth::{AuthState, ClientCredentials, ClientMetadata};
use hearth_core::mcp::version::{Era, ServerMemory, era_of};
use hearth_core::mcp::{McpError, ServerInfo};
use serde_json::{Map, Value, json};

use super::platform::{HeadlessAuthorizer, OsRandom, SystemClock};
use super::transport::ReqwestTransport;

/// Where the suite's mock authorization servers send the browser back to.
/// Nothing listens there: the headless authorizer reads the redirect.
const REDIRECT_URI: &str = "http://localhost:3000/callback";

/// Answers servers' questions the way a person clicking "accept" would:
/// declared defaults, plus a plain value for anything required.
struct AcceptingInput;

impl InputHandler for AcceptingInput {
    fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities {
            elicitation: Some(json!({"form": {}})),
            roots: Some(json!({})),
            ..ClientCapabilities::default()
        }
    }

    fn fulfil<'a>(
        &'a self,
        request: &'a InputRequest,
    ) -> LocalBoxFuture<'a, Result<Value, RpcError>> {
        let answer = match request {
            InputRequest::Elicit(e) => {
                let mut content = Map::new();
                if let Some(schema) = &e.requested_schema {
                    apply_elicitation_defaults(schema, &mut content);
                    for name in required(schema) {
                        if !content.contains_key(&name)
                            && let Some(v) = schema
                                .pointer(&format!("/properties/{name}"))
                                .and_then(sample)
                        {
                            content.insert(name, v);
                        }
                    }
                }
                let url_mode = e.mode.as_deref() == Some("url");
                serde_json::to_value(ElicitResult {
                    action: ElicitAction::Accept,
                    content: (!url_mode).then_some(content),
                })
                .map_err(|err| RpcError::new(-32603, err.to_string()))
            }
            InputRequest::ListRoots => Ok(json!({"roots": []})),
            InputRequest::Sample(_) | InputRequest::Other { .. } => Err(RpcError::new(
                METHOD_NOT_FOUND,
                format!("{} is not supported", request.method()),
            )),
        };
        async move { answer }.boxed_local()
    }
}

fn required(schema: &Value) -> Vec<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// A plain value a schema accepts, for arguments nobody supplied.
fn sample(schema: &Value) -> Option<Value> {
    if let Some(v) = schema.get("default") {
        return Some(v.clone());
    }
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return Some(first.clone());
    }
    if let Some(c) = schema.get("const") {
        return Some(c.clone());
    }
    let kind = match schema.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).find(|t| *t != "null")?,
        _ => return None,
    };
    Some(match kind {
        "string" => json!("hearth"),
        "integer" => json!(2),
        "number" => json!(3),
        "boolean" => json!(true),
        "array" => json!([]),
        "object" => sample_arguments(schema),
        _ => return None,
    })
}

/// Arguments for a tool: every property a value can be found for.
fn sample_arguments(schema: &Value) -> Value {
    let mut args = Map::new();
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            if let Some(v) = sample(prop) {
                args.insert(name.clone(), v);
            }
        }
    }
    Value::Object(args)
}

fn context() -> Value {
    std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null)
}

pub async fn run(url: String, client_metadata_url: Option<String>) -> ExitCode {
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").ok();
    let ctx = context();
    eprintln!(
        "hearth conformance client: scenario {scenario:?}, protocol {}",
        version.as_deref().unwrap_or("auto")
    );
    match drive(
        &url,
        &scenario,
        version.as_deref(),
        &ctx,
        client_metadata_url,
    )
    .await
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn build_client(
    url: &str,
    version: Option<&str>,
    ctx: &Value,
    client_metadata_url: Option<String>,
) -> Result<McpClient, String> {
    let transport: Rc<ReqwestTransport> =
        Rc::new(ReqwestTransport::new().map_err(|e| e.to_string())?);
    let preregistered = match (
        ctx.get("client_id").and_then(Value::as_str),
        ctx.get("client_secret").and_then(Value::as_str),
    ) {
        // The suite hands over credentials without naming their issuer;
        // they bind to the first authorization server that uses them.
        (Some(id), secret) => vec![ClientCredentials {
            issuer: String::new(),
            client_id: id.into(),
            client_secret: secret.map(str::to_string),
            token_endpoint_auth_method: None,
        }],
        (None, _) => Vec::new(),
    };
    let oauth = OAuthFlow::new(
        transport.clone(),
        Rc::new(HeadlessAuthorizer::new().map_err(|e| e.to_string())?),
        Rc::new(OsRandom),
        Rc::new(SystemClock::new()),
        OAuthConfig {
            server_url: url.into(),
            client: ClientMetadata {
                client_name: "Hearth".into(),
                redirect_uris: vec![REDIRECT_URI.into()],
                application_type: "native".into(),
                want_refresh: true,
            },
            metadata_document_url: client_metadata_url,
            preregistered,
        },
        AuthState::default(),
    );
    let memory = version.and_then(|v| {
        era_of(v).map(|era| ServerMemory {
            era,
            protocol_version: v.into(),
        })
    });
    let events: EventSink = Rc::new(|event: ServerEvent| eprintln!("event: {event:?}"));
    Ok(McpClient::build(
        transport,
        ClientConfig::new(url),
        Rc::new(AcceptingInput),
        Some(Rc::new(oauth)),
        Some(events),
        memory,
    ))
}

async fn drive(
    url: &str,
    scenario: &str,
    version: Option<&str>,
    ctx: &Value,
    client_metadata_url: Option<String>,
) -> Result<(), McpError> {
    let client =
        build_client(url, version, ctx, client_metadata_url).map_err(McpError::Protocol)?;
    let info = client.connect().await?;
    eprintln!("connected: {} {}", info.era.as_str(), info.protocol_version);
    let listing = client.list_tools().await?;
    for (name, why) in &listing.rejected {
        eprintln!("left out tool {name}: {why}");
    }
    if scenario == "json-schema-2020-12-preservation" {
        // Echo the listed schema back unchanged, so the suite can see that
        // nothing was stripped on the way in.
        if let Some(focal) = listing
            .tools
            .iter()
            .find(|t| t.name == "json_schema_2020_12_tool")
        {
            let args = json!({"schema": focal.input_schema});
            report(
                "json_schema_echo",
                client
                    .call_tool("json_schema_echo", args, CallOptions::default())
                    .await,
            );
        }
    } else if info.era == Era::Legacy {
        // A 2025-11-25 server sends its own requests (elicitation, say) on
        // the standalone GET stream; keep it open while working, as the
        // app does, so they are answered.
        let work = exercise(&client, &info, &listing.tools, ctx).boxed_local();
        match client.listen(SubscriptionFilter::default()).await {
            Ok(mut sub) => {
                let drive = async move {
                    while let Some(event) = sub.next().await {
                        eprintln!("stream: {event:?}");
                    }
                }
                .boxed_local();
                match select(work, drive).await {
                    Either::Left(((), _)) => {}
                    Either::Right(((), work)) => work.await,
                }
            }
            Err(e) => {
                eprintln!("no GET stream: {e}");
                work.await;
            }
        }
    } else {
        exercise(&client, &info, &listing.tools, ctx).await;
    }
    client.close().await?;
    Ok(())
}

fn report<T: std::fmt::Debug>(what: &str, result: Result<T, McpError>) {
    match result {
        Ok(v) => eprintln!("{what}: {v:?}"),
        Err(e) => eprintln!("{what} failed: {e}"),
    }
}

/// Calls every tool, reads every resource and gets every prompt. A failure
/// of one is reported and the rest go on.
async fn exercise(
    client: &McpClient,
    info: &ServerInfo,
    tools: &[hearth_core::mcp::model::Tool],
    ctx: &Value,
) {
    let planned: Vec<(String, Value)> = ctx
        .get("toolCalls")
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .filter_map(|c| {
                    Some((
                        c.get("name")?.as_str()?.to_string(),
                        c.get("arguments").cloned().unwrap_or(json!({})),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    for tool in tools {
        let mut calls: Vec<Value> = planned
            .iter()
            .filter(|(n, _)| n == &tool.name)
            .map(|(_, a)| a.clone())
            .collect();
        if calls.is_empty() {
            calls.push(sample_arguments(&tool.input_schema));
        }
        for args in calls {
            let result = client
                .call_tool(
                    &tool.name,
                    args,
                    CallOptions {
                        progress: true,
                        cancel: None,
                    },
                )
                .await;
            report(&format!("tools/call {}", tool.name), result);
        }
    }
    if info.capabilities.resources.is_some() {
        match client.list_resources().await {
            Ok(resources) => {
                for r in resources.iter().take(20) {
                    report(
                        &format!("resources/read {}", r.uri),
                        client.read_resource(&r.uri).await,
                    );
                }
            }
            Err(e) => eprintln!("resources/list failed: {e}"),
        }
        report(
            "resources/templates/list",
            client.list_resource_templates().await,
        );
    }
    if info.capabilities.prompts.is_some() {
        match client.list_prompts().await {
            Ok(prompts) => {
                for p in prompts.iter().take(20) {
                    let mut args = Map::new();
                    for a in &p.arguments {
                        args.insert(a.name.clone(), json!("hearth"));
                    }
                    report(
                        &format!("prompts/get {}", p.name),
                        client.get_prompt(&p.name, &args).await,
                    );
                }
            }
            Err(e) => eprintln!("prompts/list failed: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_sampled_from_schemas() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "number"},
            "n": {"type": "integer", "default": 7},
            "s": {"type": "string", "enum": ["x", "y"]},
            "flag": {"type": ["boolean", "null"]},
            "o": {"type": "object", "properties": {"q": {"type": "string"}}},
            "free": {}
        }});
        assert_eq!(
            sample_arguments(&schema),
            json!({"a": 3, "n": 7, "s": "x", "flag": true, "o": {"q": "hearth"}})
        );
    }

    #[test]
    fn elicitations_are_accepted_with_defaults() {
        let request = InputRequest::from_method(
            "elicitation/create",
            json!({"message": "?", "requestedSchema": {"type": "object",
                "properties": {"name": {"type": "string", "default": "John Doe"}, "ok": {"type": "boolean"}},
                "required": ["ok"]}}),
        );
        let answer = futures::executor::block_on(AcceptingInput.fulfil(&request));
        assert_eq!(
            answer,
            Ok(json!({"action": "accept", "content": {"name": "John Doe", "ok": true}}))
        );
    }
}
