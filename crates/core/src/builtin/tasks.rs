//! The tasks skill: a to-do list with due dates and priorities. Lists come
//! back in the order people work through them: overdue first, then by due
//! date, then by priority.

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::builtin::collection::{
    self, Change, Changed, Collection, Kind, Record, Stamp, clean_tags,
};
use crate::skill::call::{SkillError, SkillOutput, UndoAction};
use crate::skill::command_forms::{CommandForm, TextShape};
use crate::skill::form::ActionForm;
use crate::skill::permission::CallFacts;
use crate::skill::{Category, SkillDefinition, SkillId, Tier};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskStatus {
    Open,
    Done,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    Low,
    #[default]
    Normal,
    High,
}

pub use crate::util::dates::Date;

/// Today's date from the call's stamp.
fn today(stamp: &Stamp) -> Date {
    Date::from_tuple(stamp.today)
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub id: String,
    pub title: String,
    #[serde(default)]
    pub notes: String,
    pub status: TaskStatus,
    #[serde(default)]
    pub due: Option<Date>,
    #[serde(default)]
    pub priority: Priority,
    #[serde(default)]
    pub tags: Vec<String>,
    pub created_ms: f64,
    pub updated_ms: f64,
    #[serde(default)]
    pub completed_ms: Option<f64>,
}

impl Record for Task {
    fn id(&self) -> &str {
        &self.id
    }
}

impl Task {
    pub fn is_overdue(&self, today: Date) -> bool {
        self.status == TaskStatus::Open && self.due.is_some_and(|d| d < today)
    }
}

pub type TaskList = Collection<Task>;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StatusFilter {
    #[default]
    Open,
    Done,
    All,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum TaskAction {
    Create {
        title: String,
        #[serde(default)]
        notes: String,
        due: Option<String>,
        priority: Option<Priority>,
        #[serde(default)]
        tags: Vec<String>,
    },
    Update {
        id: String,
        title: Option<String>,
        notes: Option<String>,
        /// An empty string clears the due date.
        due: Option<String>,
        priority: Option<Priority>,
        tags: Option<Vec<String>>,
    },
    Complete {
        id: String,
    },
    Reopen {
        id: String,
    },
    Delete {
        id: Option<String>,
        #[serde(default)]
        ids: Vec<String>,
    },
    List {
        status: Option<StatusFilter>,
        priority: Option<Priority>,
        overdue: Option<bool>,
        due_before: Option<String>,
        due_after: Option<String>,
        tag: Option<String>,
        limit: Option<usize>,
    },
    Restore {
        tasks: Vec<Task>,
    },
}

pub fn definition() -> SkillDefinition {
    SkillDefinition::new(
        SkillId::new("tasks").unwrap_or_else(|e| panic!("{e}")),
        "Tasks",
        Tier::Core,
        Category::Productivity,
    )
    .with_icon("tasks")
    .with_description(
        "A to-do list: add tasks with due dates and priorities, check them off when done or reopen them, and list what is open, due or overdue.",
    )
    .with_tags([
        "tasks", "todo", "reminders", "due dates", "checklist", "planning", "done", "complete",
    ])
    .with_examples([
        "Add a task to renew my passport by March 1",
        "What's overdue?",
        "Mark the dentist task as done",
        "Show my high-priority tasks due this week",
    ])
    .with_commands(commands())
    .with_actions([
        ActionForm::new(
            "create",
            "Add a task",
            &["title", "due", "priority", "notes", "tags"],
            &["title"],
        ),
        ActionForm::new(
            "list",
            "List tasks",
            &["status", "overdue", "priority", "due_before", "due_after", "tag", "limit"],
            &[],
        ),
        ActionForm::new(
            "update",
            "Change a task",
            &["id", "title", "due", "priority", "notes", "tags"],
            &["id"],
        ),
        ActionForm::new("complete", "Mark a task done", &["id"], &["id"]),
        ActionForm::new("reopen", "Reopen a task", &["id"], &["id"]),
        ActionForm::new("delete", "Delete a task", &["id"], &["id"]),
    ])
    .with_input_schema(json!({
        "type": "object",
        "properties": {
            "action": {"enum": ["create", "update", "complete", "reopen", "delete", "list", "restore"]},
            "id": {"type": "string", "maxLength": 200},
            "ids": {"type": "array", "items": {"type": "string", "maxLength": 200}, "maxItems": 1000},
            "title": {"type": "string", "maxLength": 500},
            "notes": {"type": "string", "maxLength": 20000},
            "due": {"type": "string", "maxLength": 20, "description": "YYYY-MM-DD, today or tomorrow; empty clears it"},
            "priority": {"enum": ["low", "normal", "high"]},
            "tags": {"type": "array", "items": {"type": "string", "maxLength": 60}, "maxItems": 50},
            "status": {"enum": ["open", "done", "all"], "description": "For list; defaults to open"},
            "overdue": {"type": "boolean"},
            "due_before": {"type": "string", "maxLength": 20},
            "due_after": {"type": "string", "maxLength": 20},
            "tag": {"type": "string", "maxLength": 60},
            "limit": {"type": "integer", "minimum": 1, "maximum": 200},
            "tasks": {"type": "array", "maxItems": 1000, "items": {"type": "object"}}
        },
        "required": ["action"],
        "additionalProperties": false
    }))
    .with_output_schema(json!({"type": "object"}))
}

/// How tasks are typed: `/task <title> [when] [!high] [#tag]` adds one,
/// `/tasks` lists the open ones, `/tasks done|overdue|all` the others.
fn commands() -> Vec<CommandForm> {
    let list = |verb: &str, fixed: Value, summary: &str| {
        CommandForm::new("tasks", TextShape::Nothing, summary)
            .verb(verb)
            .fixed(fixed)
            .examples([format!("/tasks {verb}")])
    };
    vec![
        CommandForm::new(
            "task",
            TextShape::Task,
            "Add a task; after its title say when it is due (tomorrow, friday, March 1), !high or !low, and #tags",
        )
        .fixed(json!({"action": "create"}))
        .examples([
            "/task Renew passport tomorrow !high",
            "/task Pay rent by March 1 #home",
        ])
        .leads([
            "remind me to",
            "remind me",
            "add a task to",
            "add a task",
            "add task",
            "create a task to",
            "create a task",
            "new task",
            "make a task",
            "add a todo",
            "add to my todo list",
            "add to my to-do list",
            "todo",
            "to-do",
            "i need to",
            "i have to",
            "i must",
        ]),
        CommandForm::new("tasks", TextShape::Nothing, "List open tasks, overdue first")
            .fixed(json!({"action": "list"}))
            .examples(["/tasks"]),
        list(
            "done",
            json!({"action": "list", "status": "done"}),
            "List finished tasks",
        ),
        list(
            "overdue",
            json!({"action": "list", "overdue": true}),
            "List overdue tasks",
        ),
        list(
            "all",
            json!({"action": "list", "status": "all"}),
            "List every task",
        ),
        CommandForm::new("tasks", TextShape::Task, "Add a task")
            .fixed(json!({"action": "create"}))
            .examples(["/tasks Water the plants on saturday"]),
    ]
}

pub fn assess(arguments: &Value) -> CallFacts {
    let n = collection::removal_count(arguments, &KIND);
    CallFacts {
        bulk_destructive: (n > 1).then(|| format!("delete {n} tasks")),
    }
}

pub fn parse(arguments: &Value) -> Result<TaskAction, SkillError> {
    collection::parse(arguments)
}

/// How the tasks skill names its records.
pub const KIND: Kind = Kind {
    one: "task",
    many: "tasks",
    find_hint: "list tasks to find it",
    remove: "delete",
    restore_field: "tasks",
};

/// The order tasks are shown in.
pub fn compare(a: &Task, b: &Task, today: Date) -> Ordering {
    let done = |t: &Task| t.status == TaskStatus::Done;
    done(a)
        .cmp(&done(b))
        .then_with(|| b.is_overdue(today).cmp(&a.is_overdue(today)))
        .then_with(|| match (a.due, b.due) {
            (Some(x), Some(y)) => x.cmp(&y),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        })
        .then_with(|| b.priority.cmp(&a.priority))
        .then_with(|| {
            if done(a) {
                b.completed_ms
                    .unwrap_or(0.0)
                    .total_cmp(&a.completed_ms.unwrap_or(0.0))
            } else {
                a.created_ms.total_cmp(&b.created_ms)
            }
        })
}

fn find<'a>(list: &'a TaskList, id: &str) -> Result<&'a Task, SkillError> {
    collection::find(list, id, &KIND)
}

/// What a person needs to know about a task besides its title, in
/// words: ", due 15 Jan 2030 (overdue), high priority".
fn details(t: &Task, today: Date) -> String {
    let mut s = String::new();
    if let Some(d) = t.due {
        s.push_str(&format!(", due {}", d.words()));
        if t.is_overdue(today) {
            s.push_str(" (overdue)");
        }
    }
    match t.priority {
        Priority::High => s.push_str(", high priority"),
        Priority::Low => s.push_str(", low priority"),
        Priority::Normal => {}
    }
    s
}

/// One task of a list: its title and details, and "done" once it is.
fn line(t: &Task, today: Date) -> String {
    let done = if t.status == TaskStatus::Done {
        ", done"
    } else {
        ""
    };
    format!("{}{}{done}", t.title, details(t, today))
}

fn restore_undo(label: &str, tasks: Vec<Task>) -> UndoAction {
    collection::restore_undo(label, definition().id, &KIND, tasks)
}

fn title(t: &str) -> Result<String, SkillError> {
    let t = t.trim();
    if t.is_empty() {
        Err(SkillError::new("a task needs a title"))
    } else {
        Ok(t.to_string())
    }
}

fn date(s: &str, stamp: &Stamp) -> Result<Date, SkillError> {
    Date::parse(s, today(stamp)).map_err(SkillError::new)
}

pub fn run(list: &TaskList, action: TaskAction, stamp: &Stamp) -> Changed<Task> {
    let today = today(stamp);
    match action {
        TaskAction::Create {
            title: t,
            notes,
            due,
            priority,
            tags,
        } => {
            let due = match due.as_deref().map(str::trim) {
                None | Some("") => None,
                Some(d) => Some(date(d, stamp)?),
            };
            let task = Task {
                id: stamp.new_id.clone(),
                title: title(&t)?,
                notes,
                status: TaskStatus::Open,
                due,
                priority: priority.unwrap_or_default(),
                tags: clean_tags(&tags),
                created_ms: stamp.now_ms,
                updated_ms: stamp.now_ms,
                completed_ms: None,
            };
            let text = format!("Added task \"{}\"{}.", task.title, details(&task, today));
            let undo = UndoAction::new(
                "Undo: remove this task",
                definition().id,
                json!({"action": "delete", "id": task.id}),
            );
            Ok((
                SkillOutput::text_and_json(text, json!({"task": task})).with_undo(undo),
                vec![Change::Put(task)],
            ))
        }
        TaskAction::Update {
            id,
            title: t,
            notes,
            due,
            priority,
            tags,
        } => {
            let before = find(list, &id)?.clone();
            if t.is_none()
                && notes.is_none()
                && due.is_none()
                && priority.is_none()
                && tags.is_none()
            {
                return Err(SkillError::new(
                    "nothing to update: give a title, notes, due date, priority or tags",
                ));
            }
            let mut task = before.clone();
            if let Some(t) = t {
                task.title = title(&t)?;
            }
            if let Some(n) = notes {
                task.notes = n;
            }
            if let Some(d) = due {
                task.due = if d.trim().is_empty() {
                    None
                } else {
                    Some(date(&d, stamp)?)
                };
            }
            if let Some(p) = priority {
                task.priority = p;
            }
            if let Some(t) = tags {
                task.tags = clean_tags(&t);
            }
            task.updated_ms = stamp.now_ms;
            let text = format!("Updated task \"{}\"{}.", task.title, details(&task, today));
            let out = SkillOutput::text_and_json(text, json!({"task": task})).with_undo(
                restore_undo("Undo: restore the previous version", vec![before]),
            );
            Ok((out, vec![Change::Put(task)]))
        }
        TaskAction::Complete { id } => {
            let before = find(list, &id)?.clone();
            if before.status == TaskStatus::Done {
                return Err(SkillError::new(format!(
                    "\"{}\" is already done",
                    before.title
                )));
            }
            let mut task = before.clone();
            task.status = TaskStatus::Done;
            task.completed_ms = Some(stamp.now_ms);
            task.updated_ms = stamp.now_ms;
            let text = format!("Done: {}", task.title);
            let out = SkillOutput::text_and_json(text, json!({"task": task}))
                .with_undo(restore_undo("Undo: reopen", vec![before]));
            Ok((out, vec![Change::Put(task)]))
        }
        TaskAction::Reopen { id } => {
            let before = find(list, &id)?.clone();
            if before.status == TaskStatus::Open {
                return Err(SkillError::new(format!(
                    "\"{}\" is already open",
                    before.title
                )));
            }
            let mut task = before.clone();
            task.status = TaskStatus::Open;
            task.completed_ms = None;
            task.updated_ms = stamp.now_ms;
            let text = format!("Reopened: {}", task.title);
            let out = SkillOutput::text_and_json(text, json!({"task": task}))
                .with_undo(restore_undo("Undo: mark done again", vec![before]));
            Ok((out, vec![Change::Put(task)]))
        }
        TaskAction::Delete { id, ids } => {
            let (tasks, changes) = collection::remove_many(list, id, ids, &KIND)?;
            let text = match tasks.as_slice() {
                [one] => format!("Deleted task \"{}\".", one.title),
                many => format!("Deleted {} tasks.", many.len()),
            };
            let deleted: Vec<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
            let out = SkillOutput::text_and_json(text, json!({"deleted": deleted}))
                .with_undo(restore_undo("Undo: bring them back", tasks.clone()));
            Ok((out, changes))
        }
        TaskAction::List {
            status,
            priority,
            overdue,
            due_before,
            due_after,
            tag,
            limit,
        } => {
            let before = due_before.as_deref().map(|d| date(d, stamp)).transpose()?;
            let after = due_after.as_deref().map(|d| date(d, stamp)).transpose()?;
            let status = status.unwrap_or_default();
            let mut tasks: Vec<&Task> = list
                .iter()
                .filter(|t| match status {
                    StatusFilter::Open => t.status == TaskStatus::Open,
                    StatusFilter::Done => t.status == TaskStatus::Done,
                    StatusFilter::All => true,
                })
                .filter(|t| priority.is_none_or(|p| t.priority == p))
                .filter(|t| overdue.is_none_or(|o| t.is_overdue(today) == o))
                .filter(|t| before.is_none_or(|b| t.due.is_some_and(|d| d <= b)))
                .filter(|t| after.is_none_or(|a| t.due.is_some_and(|d| d >= a)))
                .filter(|t| {
                    tag.as_ref()
                        .is_none_or(|g| t.tags.iter().any(|x| x.eq_ignore_ascii_case(g)))
                })
                .collect();
            tasks.sort_by(|a, b| compare(a, b, today));
            let total = tasks.len();
            tasks.truncate(limit.unwrap_or(50).min(200));
            let text = if total == 0 {
                "No tasks match.".to_string()
            } else {
                let lines: Vec<String> = tasks.iter().map(|t| line(t, today)).collect();
                format!("{}:\n{}", KIND.count(total), lines.join("\n"))
            };
            Ok((
                SkillOutput::text_and_json(text, json!({"total": total, "tasks": tasks})),
                Vec::new(),
            ))
        }
        TaskAction::Restore { tasks } => {
            let (ids, changes) = collection::restore(tasks)?;
            let text = format!("Restored {}.", KIND.count(ids.len()));
            Ok((
                SkillOutput::text_and_json(text, json!({"restored": ids})),
                changes,
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Content;

    fn stamp(id: &str, now: f64) -> Stamp {
        Stamp {
            now_ms: now,
            new_id: id.into(),
            today: (2026, 11, 21),
        }
    }

    fn step(
        list: &mut TaskList,
        args: Value,
        s: &Stamp,
    ) -> Result<(String, Option<UndoAction>), String> {
        let action = parse(&args).map_err(|e| e.message)?;
        let (out, changes) = run(list, action, s).map_err(|e| e.message)?;
        list.apply(&changes);
        let text = out.content.iter().find_map(|c| match c {
            Content::Text { text } => Some(text.clone()),
            _ => None,
        });
        Ok((text.unwrap_or_default(), out.undo))
    }

    fn seeded() -> TaskList {
        let mut list = TaskList::default();
        let adds = [
            json!({"action": "create", "title": "Renew passport", "due": "2026-12-01", "priority": "high"}),
            json!({"action": "create", "title": "Pay rent", "due": "yesterday"}),
            json!({"action": "create", "title": "Read a book"}),
            json!({"action": "create", "title": "Dentist", "due": "tomorrow", "priority": "low", "tags": ["health"]}),
            json!({"action": "create", "title": "Call mum", "due": "tomorrow", "priority": "high"}),
        ];
        for (i, a) in adds.into_iter().enumerate() {
            step(&mut list, a, &stamp(&format!("t{i}"), i as f64)).unwrap();
        }
        list
    }

    #[test]
    fn lists_come_in_working_order() {
        let mut list = seeded();
        assert_eq!(
            step(&mut list, json!({"action": "list"}), &stamp("x", 10.0))
                .unwrap()
                .0,
            "5 tasks:
Pay rent, due 20 Nov 2026 (overdue)
Call mum, due 22 Nov 2026, high priority
Dentist, due 22 Nov 2026, low priority
Renew passport, due 1 Dec 2026, high priority
Read a book"
        );
    }

    #[test]
    fn filters() {
        let mut list = seeded();
        let titles = |list: &mut TaskList, args: Value| -> Vec<String> {
            let action = parse(&args).unwrap();
            let (out, _) = run(list, action, &stamp("x", 10.0)).unwrap();
            out.structured.unwrap()["tasks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["title"].as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(
            titles(&mut list, json!({"action": "list", "overdue": true})),
            ["Pay rent"]
        );
        assert_eq!(
            titles(&mut list, json!({"action": "list", "priority": "high"})),
            ["Call mum", "Renew passport"]
        );
        assert_eq!(
            titles(
                &mut list,
                json!({"action": "list", "due_before": "2026-11-30"})
            ),
            ["Pay rent", "Call mum", "Dentist"]
        );
        assert_eq!(
            titles(
                &mut list,
                json!({"action": "list", "due_after": "tomorrow"})
            ),
            ["Call mum", "Dentist", "Renew passport"]
        );
        assert_eq!(
            titles(&mut list, json!({"action": "list", "tag": "HEALTH"})),
            ["Dentist"]
        );
        step(
            &mut list,
            json!({"action": "complete", "id": "t1"}),
            &stamp("x", 11.0),
        )
        .unwrap();
        assert_eq!(
            titles(&mut list, json!({"action": "list", "status": "done"})),
            ["Pay rent"]
        );
        assert_eq!(
            titles(&mut list, json!({"action": "list", "overdue": true})),
            Vec::<String>::new(),
            "done tasks are never overdue"
        );
        assert_eq!(
            titles(&mut list, json!({"action": "list", "status": "all"}))
                .last()
                .unwrap(),
            "Pay rent",
            "done tasks sort last"
        );
    }

    #[test]
    fn complete_reopen_update_delete_and_undo() {
        let mut list = seeded();
        let (t, undo) = step(
            &mut list,
            json!({"action": "complete", "id": "t0"}),
            &stamp("x", 20.0),
        )
        .unwrap();
        assert_eq!(t, "Done: Renew passport");
        assert_eq!(list.get("t0").unwrap().completed_ms, Some(20.0));
        assert_eq!(
            step(
                &mut list,
                json!({"action": "complete", "id": "t0"}),
                &stamp("x", 21.0)
            ),
            Err("\"Renew passport\" is already done".into())
        );
        step(&mut list, undo.unwrap().arguments, &stamp("x", 22.0)).unwrap();
        assert_eq!(list.get("t0").unwrap().status, TaskStatus::Open);

        step(
            &mut list,
            json!({"action": "complete", "id": "t2"}),
            &stamp("x", 23.0),
        )
        .unwrap();
        assert_eq!(
            step(
                &mut list,
                json!({"action": "reopen", "id": "t2"}),
                &stamp("x", 24.0)
            )
            .unwrap()
            .0,
            "Reopened: Read a book"
        );
        assert_eq!(
            step(
                &mut list,
                json!({"action": "reopen", "id": "t2"}),
                &stamp("x", 25.0)
            ),
            Err("\"Read a book\" is already open".into())
        );

        let (t, undo) = step(
            &mut list,
            json!({"action": "update", "id": "t2", "due": "2026-11-25", "priority": "high"}),
            &stamp("x", 26.0),
        )
        .unwrap();
        assert_eq!(
            t,
            "Updated task \"Read a book\", due 25 Nov 2026, high priority."
        );
        step(&mut list, undo.unwrap().arguments, &stamp("x", 27.0)).unwrap();
        assert_eq!(list.get("t2").unwrap().due, None);
        step(
            &mut list,
            json!({"action": "update", "id": "t0", "due": ""}),
            &stamp("x", 28.0),
        )
        .unwrap();
        assert_eq!(list.get("t0").unwrap().due, None, "an empty due clears it");

        let (t, undo) = step(
            &mut list,
            json!({"action": "delete", "ids": ["t3", "t4"]}),
            &stamp("x", 29.0),
        )
        .unwrap();
        assert_eq!(t, "Deleted 2 tasks.");
        assert_eq!(list.len(), 3);
        step(&mut list, undo.unwrap().arguments, &stamp("x", 30.0)).unwrap();
        assert_eq!(list.len(), 5);
    }

    #[test]
    fn bad_input() {
        let mut list = seeded();
        let cases = [
            (
                json!({"action": "create", "title": "x", "due": "2026-02-30"}),
                "'2026-02-30' is not a date; use YYYY-MM-DD, e.g. 2026-12-24, or 'tomorrow'",
            ),
            (
                json!({"action": "create", "title": "x", "due": "some tuesday"}),
                "'some tuesday' is not a date; use YYYY-MM-DD, e.g. 2026-12-24, or 'tomorrow'",
            ),
            (
                json!({"action": "create", "title": ""}),
                "a task needs a title",
            ),
            (
                json!({"action": "complete", "id": "nope"}),
                "there is no task with id 'nope'; list tasks to find it",
            ),
            (
                json!({"action": "update", "id": "t0"}),
                "nothing to update: give a title, notes, due date, priority or tags",
            ),
            (
                json!({"action": "list", "due_before": "soon"}),
                "'soon' is not a date; use YYYY-MM-DD, e.g. 2026-12-24, or 'tomorrow'",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(
                step(&mut list, args.clone(), &stamp("n", 1.0)).map(|x| x.0),
                Err(want.to_string()),
                "{args}"
            );
        }
        assert_eq!(list.len(), 5);
        assert_eq!(
            assess(&json!({"action": "delete", "ids": ["a", "b"]}))
                .bulk_destructive
                .as_deref(),
            Some("delete 2 tasks")
        );
    }
}
