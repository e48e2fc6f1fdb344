//! The execution log, shown as "Activity": one record per call, denied and
//! failed ones included, written by a hook on the call path.

use std::rc::Rc;

use futures::FutureExt;
use futures::future::LocalBoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::skill::call::{CallOrigin, ToolCall, ToolResult, ToolStatus};
use crate::skill::invoke::{CallContext, Hook};
use crate::skill::{SkillDefinition, SkillId, Tier};

/// One call, as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ActivityRecord {
    /// The call id; also the storage key.
    pub id: String,
    pub skill_id: SkillId,
    /// The skill's display name when it ran.
    pub skill_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<Tier>,
    pub origin: CallOrigin,
    pub arguments: Value,
    pub result: ToolResult,
}

impl ActivityRecord {
    pub fn new(call: &ToolCall, skill: Option<&SkillDefinition>, result: &ToolResult) -> Self {
        Self {
            id: call.id.clone(),
            skill_id: call.skill_id.clone(),
            skill_name: skill
                .map(|s| s.name.clone())
                .unwrap_or_else(|| call.skill_id.to_string()),
            tier: skill.map(|s| s.tier),
            origin: call.origin.clone(),
            arguments: call.arguments.clone(),
            result: result.clone(),
        }
    }

    pub fn from_call(cx: &CallContext, result: &ToolResult) -> Self {
        Self::new(&cx.call, cx.skill.as_ref(), result)
    }

    pub fn status(&self) -> ToolStatus {
        self.result.status
    }

    /// One line of the JSON Lines export.
    pub fn to_json_line(&self) -> String {
        // Serialising our own plain types cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// Where records go; IndexedDB in the app.
pub trait ActivityStore {
    fn append<'a>(&'a self, record: &'a ActivityRecord) -> LocalBoxFuture<'a, Result<(), String>>;
}

/// The hook that writes every result to the log. A failed write is
/// reported on the result, so the person learns the log is incomplete.
pub struct ActivityHook {
    store: Rc<dyn ActivityStore>,
}

impl ActivityHook {
    pub fn new(store: Rc<dyn ActivityStore>) -> Self {
        Self { store }
    }
}

impl Hook for ActivityHook {
    fn after<'a>(
        &'a self,
        cx: &'a CallContext,
        result: &'a mut ToolResult,
    ) -> LocalBoxFuture<'a, ()> {
        async move {
            let record = ActivityRecord::from_call(cx, result);
            if let Err(e) = self.store.append(&record).await {
                let note = format!("(this call could not be written to the activity log: {e})");
                match &mut result.error {
                    Some(msg) => {
                        msg.push(' ');
                        msg.push_str(&note);
                    }
                    None => result.error = Some(note),
                }
            }
        }
        .boxed_local()
    }
}

/// How often a skill ran and when it last did, for the Skills panel.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub skill_id: String,
    pub count: u64,
    pub last_used_ms: f64,
}

impl Usage {
    /// Counts one finished call; denied calls did not use the skill.
    pub fn record(&mut self, result: &ToolResult) {
        match result.status {
            ToolStatus::Completed | ToolStatus::Failed | ToolStatus::InputRequired => {
                self.count += 1;
                self.last_used_ms = self.last_used_ms.max(result.started_at_ms);
            }
            ToolStatus::Denied => {}
        }
    }
}

/// The Activity view's filters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ActivityFilter {
    pub skill: Option<SkillId>,
    pub status: Option<ToolStatus>,
    /// Only records that started at or after this Unix ms.
    pub since_ms: Option<f64>,
    /// Case-insensitive words, all of which must appear in the arguments,
    /// result or skill name.
    pub text: String,
}

impl ActivityFilter {
    pub fn matches(&self, r: &ActivityRecord) -> bool {
        if self.skill.as_ref().is_some_and(|s| *s != r.skill_id) {
            return false;
        }
        if self.status.is_some_and(|s| s != r.result.status) {
            return false;
        }
        if self.since_ms.is_some_and(|t| r.result.started_at_ms < t) {
            return false;
        }
        let words: Vec<String> = self
            .text
            .split_whitespace()
            .map(str::to_lowercase)
            .collect();
        if words.is_empty() {
            return true;
        }
        let haystack = format!(
            "{} {} {} {} {}",
            r.skill_id,
            r.skill_name,
            r.arguments,
            serde_json::to_string(&r.result.content).unwrap_or_default(),
            r.result.error.as_deref().unwrap_or("")
        )
        .to_lowercase();
        words.iter().all(|w| haystack.contains(w.as_str()))
    }
}

/// Renders records as JSON Lines, one record per line.
pub fn export_jsonl<'a>(records: impl IntoIterator<Item = &'a ActivityRecord>) -> String {
    let mut out = String::new();
    for r in records {
        out.push_str(&r.to_json_line());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skill::call::Content;
    use serde_json::json;

    fn record(
        id: &str,
        skill: &str,
        status: ToolStatus,
        args: Value,
        text: &str,
        at: f64,
    ) -> ActivityRecord {
        let call = ToolCall {
            id: id.into(),
            skill_id: SkillId::new(skill).unwrap(),
            arguments: args.clone(),
            conversation_id: None,
            origin: CallOrigin::User,
        };
        let mut result = ToolResult::for_call(&call, status);
        result.content = vec![Content::Text { text: text.into() }];
        result.started_at_ms = at;
        ActivityRecord {
            id: id.into(),
            skill_id: call.skill_id.clone(),
            skill_name: skill.into(),
            tier: Some(Tier::Core),
            origin: CallOrigin::User,
            arguments: args,
            result,
        }
    }

    #[test]
    fn filters_combine() {
        let records = [
            record(
                "1",
                "calculator",
                ToolStatus::Completed,
                json!({"expression": "15% of 847"}),
                "127.05",
                10.0,
            ),
            record(
                "2",
                "notes",
                ToolStatus::Denied,
                json!({"action": "create", "title": "Groceries"}),
                "",
                20.0,
            ),
            record(
                "3",
                "notes",
                ToolStatus::Completed,
                json!({"action": "search", "query": "milk"}),
                "Groceries",
                30.0,
            ),
        ];
        let ids = |f: ActivityFilter| -> Vec<String> {
            records
                .iter()
                .filter(|r| f.matches(r))
                .map(|r| r.id.clone())
                .collect()
        };
        assert_eq!(ids(ActivityFilter::default()), ["1", "2", "3"]);
        assert_eq!(
            ids(ActivityFilter {
                skill: Some(SkillId::new("notes").unwrap()),
                ..Default::default()
            }),
            ["2", "3"]
        );
        assert_eq!(
            ids(ActivityFilter {
                status: Some(ToolStatus::Denied),
                ..Default::default()
            }),
            ["2"]
        );
        assert_eq!(
            ids(ActivityFilter {
                since_ms: Some(15.0),
                ..Default::default()
            }),
            ["2", "3"]
        );
        assert_eq!(
            ids(ActivityFilter {
                text: "GROCERIES".into(),
                ..Default::default()
            }),
            ["2", "3"]
        );
        assert_eq!(
            ids(ActivityFilter {
                text: "groceries milk".into(),
                ..Default::default()
            }),
            ["3"]
        );
        assert_eq!(
            ids(ActivityFilter {
                text: "127.05".into(),
                ..Default::default()
            }),
            ["1"]
        );
    }

    #[test]
    fn export_is_one_parseable_record_per_line() {
        let records = vec![
            record(
                "1",
                "calculator",
                ToolStatus::Completed,
                json!({"expression": "1\n+1"}),
                "2",
                1.0,
            ),
            record("2", "notes", ToolStatus::Failed, json!({}), "", 2.0),
        ];
        let text = export_jsonl(&records);
        let back: Vec<ActivityRecord> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(back, records);
        assert_eq!(text.lines().count(), 2);
    }
}
