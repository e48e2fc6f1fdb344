//! Answers one agent request in this tab: tool and resource listings from
//! the registry and the stored notes and memories (only what the agent
//! was given), and calls and resource reads through the one call path,
//! with the agent as the call's origin. While a call waits for the
//! person, the agent hears so (as progress, when it asked for it), and
//! the call shows in the tab.

use std::rc::Rc;

use futures::FutureExt;
use futures::future::{Either, select};
use hearth_core::agents::exported::{
    self, HearthUri, PAGE, call_params, call_result, page, read_result, readable, unknown_tool,
};
use hearth_core::agents::wire::{RelayedRequest, ReplyBody};
use hearth_core::mcp::jsonrpc::{METHOD_NOT_FOUND, RpcError};
use hearth_core::{CallOrigin, SkillId, ToolCall, ToolResult};
use leptos::prelude::WithUntracked;
use serde_json::{Value, json};

use super::channel::Channel;
use crate::platform::new_id;

/// How often a call is looked at for a question waiting in the tab.
const WATCH_MS: u32 = 150;

/// Answers `request` on `channel`.
pub async fn answer(channel: Rc<Channel>, request: RelayedRequest) {
    let relay = request.relay.clone();
    let body = match run(&channel, &request).await {
        Ok(result) => ReplyBody::Result(result),
        Err(error) => ReplyBody::Error(error),
    };
    channel.waiting.borrow_mut().remove(&relay);
    channel.live.finished(&relay);
    channel.reply(&relay, body).await;
}

async fn run(channel: &Rc<Channel>, request: &RelayedRequest) -> Result<Value, RpcError> {
    let agent = &request.agent;
    let rt = &channel.rt;
    match request.method.as_str() {
        "tools/list" => {
            let tools = exported::tools(rt.registry().iter(), agent);
            Ok(json!({"tools": tools}))
        }
        "tools/call" => {
            let (name, arguments) = call_params(&request.params)?;
            let skill = SkillId::new(&name)
                .ok()
                .and_then(|id| rt.registry().get(&id).cloned())
                .filter(|s| agent.sees(s))
                .ok_or_else(|| unknown_tool(&name, &agent.name))?;
            let result = call(channel, request, skill.id.clone(), arguments, &skill.name).await;
            Ok(serde_json::to_value(call_result(&result, &skill)).unwrap_or(Value::Null))
        }
        "resources/list" => {
            let data = rt.data();
            let all = exported::resources(
                data.notes.borrow().iter(),
                data.memories.borrow().iter(),
                agent,
            );
            let cursor = request.params.get("cursor").and_then(Value::as_str);
            let (items, next) = page(all, cursor, PAGE)?;
            let mut result = json!({"resources": items});
            if let Some(next) = next {
                result["nextCursor"] = next.into();
            }
            Ok(result)
        }
        "resources/templates/list" => Ok(json!({"resourceTemplates": exported::templates(agent)})),
        "resources/read" => {
            let uri = request
                .params
                .get("uri")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let target: HearthUri = readable(uri, agent)?;
            let skill = SkillId::new(target.skill())
                .map_err(|e| RpcError::new(METHOD_NOT_FOUND, e.to_string()))?;
            let name = rt
                .registry()
                .get(&skill)
                .map(|s| s.name.clone())
                .unwrap_or_else(|| target.skill().to_string());
            let result = call(channel, request, skill, target.read_arguments(), &name).await;
            let read = read_result(&target, &result)?;
            Ok(serde_json::to_value(read).unwrap_or(Value::Null))
        }
        other => Err(RpcError::new(
            METHOD_NOT_FOUND,
            format!("Method not found: {other}"),
        )),
    }
}

/// One call through the call path, as the agent. While it runs the tab
/// shows it; when it starts waiting for the person, the agent is told.
async fn call(
    channel: &Rc<Channel>,
    request: &RelayedRequest,
    skill_id: SkillId,
    arguments: Value,
    skill_name: &str,
) -> ToolResult {
    let call = ToolCall {
        id: new_id(),
        skill_id,
        arguments,
        conversation_id: None,
        origin: CallOrigin::Agent(request.agent.caller()),
    };
    let relay = request.relay.clone();
    channel
        .waiting
        .borrow_mut()
        .insert(relay.clone(), call.id.clone());
    channel
        .live
        .started(&relay, &request.agent.name, skill_name, &call.id);
    if request.progress {
        channel
            .reply(
                &relay,
                ReplyBody::Progress {
                    progress: 0.0,
                    total: None,
                    message: Some(format!("Hearth is running {skill_name}")),
                },
            )
            .await;
    }
    let call_id = call.id.clone();
    let mut running = channel.rt.invoke_call(call).boxed_local();
    let mut told = false;
    loop {
        let tick = gloo_timers::future::TimeoutFuture::new(WATCH_MS);
        match select(running, tick).await {
            Either::Left((result, _)) => return result,
            Either::Right((_, still)) => {
                running = still;
                let asking = channel
                    .rt
                    .approver()
                    .queue
                    .with_untracked(|q| q.iter().any(|p| p.request.call.id == call_id));
                channel.live.asking(&relay, asking);
                if asking && !told {
                    told = true;
                    if request.progress {
                        channel
                            .reply(
                                &relay,
                                ReplyBody::Progress {
                                    progress: 0.5,
                                    total: None,
                                    message: Some(format!(
                                        "Waiting for the person to approve {skill_name} in Hearth"
                                    )),
                                },
                            )
                            .await;
                    }
                } else if !asking && told {
                    // Approved (or denied): it is running now, and can no
                    // longer be withdrawn.
                    channel.waiting.borrow_mut().remove(&relay);
                }
            }
        }
    }
}
