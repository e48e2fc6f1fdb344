//! How a person types a skill: the command forms a skill declares
//! (`/note Buy milk`, `/tasks done`, `/notes` alone) and the shapes of
//! plain text they read (one parameter, a title with a body, a task line
//! with its due date and priority).
//!
//! Forms are data on the skill's definition; `command` picks the form a
//! line means and this module turns its text into arguments.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::util::dates::Date;

/// One way to run a skill from the composer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommandForm {
    /// The word after the slash: the skill's id or another name for it,
    /// e.g. `note` or `remember`.
    pub word: String,
    /// A first word of the text that picks this form: `/notes search …`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verb: Option<String>,
    /// Arguments the form sets itself, e.g. `{"action": "create"}`.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub fixed: Map<String, Value>,
    /// What the text after the word (and verb) becomes.
    pub text: TextShape,
    /// What the form does, for `/help`: "Add a task".
    pub summary: String,
    /// Whole lines a person can type; `/help` shows them and the tests run
    /// every one.
    pub examples: Vec<String>,
    /// Plain words that, at the start of what a person types without a
    /// slash, pick this form ("make a note", "what is"); what follows them
    /// is read as the form's text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub leads: Vec<String>,
}

impl CommandForm {
    /// A form for `/word <text>` with no fixed arguments or examples yet.
    pub fn new(word: &str, text: TextShape, summary: &str) -> Self {
        Self {
            word: word.to_string(),
            verb: None,
            fixed: Map::new(),
            text,
            summary: summary.to_string(),
            examples: Vec::new(),
            leads: Vec::new(),
        }
    }

    /// The plain words that pick this form, lower case.
    pub fn leads<I, S>(mut self, leads: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.leads = leads.into_iter().map(Into::into).collect();
        self
    }

    /// The lead that begins `text` (case aside, as a whole word or
    /// phrase), the longest when several do, and what follows it.
    pub fn lead_of<'t>(&self, text: &'t str) -> Option<(usize, &'t str)> {
        let lower = text.to_lowercase();
        self.leads
            .iter()
            .filter(|lead| {
                lower.starts_with(lead.as_str())
                    && lower[lead.len()..]
                        .chars()
                        .next()
                        .is_none_or(|c| !c.is_alphanumeric())
            })
            .map(String::len)
            .max()
            // Lower-casing keeps these leads' byte lengths (they are ASCII
            // and so is their match), so the cut is at the same place.
            .filter(|&n| text.is_char_boundary(n))
            .map(|n| (n, text[n..].trim_start_matches([' ', ',', ':'])))
    }

    /// The arguments plain words stand for, after any lead was taken off.
    pub fn plain_arguments(&self, text: &str) -> Value {
        let mut args = self.fixed.clone();
        self.text.fill_plain(text, &mut args);
        Value::Object(args)
    }

    pub fn verb(mut self, verb: &str) -> Self {
        self.verb = Some(verb.to_string());
        self
    }

    /// Arguments the form sets; `fixed` must be a JSON object.
    pub fn fixed(mut self, fixed: Value) -> Self {
        if let Value::Object(map) = fixed {
            self.fixed = map;
        }
        self
    }

    pub fn examples<I, S>(mut self, lines: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.examples = lines.into_iter().map(Into::into).collect();
        self
    }

    /// How the form is typed: `/tasks done`, `/note <title>`.
    pub fn usage(&self) -> String {
        let mut s = format!("/{}", self.word);
        if let Some(v) = &self.verb {
            s.push(' ');
            s.push_str(v);
        }
        if let Some(p) = self.text.placeholder() {
            s.push(' ');
            s.push_str(&p);
        }
        s
    }

    /// The arguments for `text` typed after the word (and verb).
    pub fn arguments(&self, text: &str) -> Value {
        let mut args = self.fixed.clone();
        self.text.fill(text, &mut args);
        Value::Object(args)
    }
}

/// How plain text becomes arguments.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "shape", rename_all = "snake_case")]
pub enum TextShape {
    /// The form takes no text: `/notes` alone lists.
    Nothing,
    /// The whole text is one string parameter.
    Whole { param: String },
    /// A calculation, typed whole after the slash; from plain words it is
    /// what remains once the lead ("what is") is gone, when that holds a
    /// number or a date.
    Expression { param: String },
    /// The first line is the title and the rest the body; `#words` in the
    /// title line become tags.
    TitleBody {
        title: String,
        body: String,
        tags: String,
    },
    /// Text with `#words` taken out as tags.
    Tagged { param: String, tags: String },
    /// A task: its title, then optionally when it is due ("tomorrow", "by
    /// friday", "March 1"), `!high` or `!low`, and `#tags`, in any order
    /// after the title.
    Task,
}

impl TextShape {
    pub fn takes_text(&self) -> bool {
        !matches!(self, TextShape::Nothing)
    }

    /// Whether the text is written content a person composes (a title, a
    /// task, a fact) rather than a formal value (an expression, a path).
    pub fn is_content(&self) -> bool {
        matches!(
            self,
            TextShape::TitleBody { .. } | TextShape::Tagged { .. } | TextShape::Task
        )
    }

    /// The usage placeholder shown in `/help`: `<title>`.
    pub fn placeholder(&self) -> Option<String> {
        match self {
            TextShape::Nothing => None,
            TextShape::Whole { param }
            | TextShape::Expression { param }
            | TextShape::Tagged { param, .. } => Some(format!("<{}>", param.replace('_', " "))),
            TextShape::TitleBody { title, .. } => Some(format!("<{title}>")),
            TextShape::Task => Some("<task> [when] [!high|!low] [#tag]".to_string()),
        }
    }

    /// The arguments `text` stands for, added to `args`. Empty text sets
    /// nothing.
    pub fn fill(&self, text: &str, args: &mut Map<String, Value>) {
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        match self {
            TextShape::Nothing => {}
            TextShape::Whole { param } | TextShape::Expression { param } => {
                args.insert(param.clone(), Value::String(text.to_string()));
            }
            TextShape::TitleBody { title, body, tags } => {
                let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
                let (words, found) = take_tags(first);
                let heading = if words.is_empty() {
                    first.trim()
                } else {
                    &words
                };
                args.insert(title.clone(), Value::String(heading.to_string()));
                if !rest.trim().is_empty() {
                    args.insert(body.clone(), Value::String(rest.trim().to_string()));
                }
                if !found.is_empty() && !words.is_empty() {
                    args.insert(tags.clone(), strings(found));
                }
            }
            TextShape::Tagged { param, tags } => {
                let (words, found) = take_tags(text);
                if words.is_empty() {
                    args.insert(param.clone(), Value::String(text.to_string()));
                } else {
                    args.insert(param.clone(), Value::String(words));
                    if !found.is_empty() {
                        args.insert(tags.clone(), strings(found));
                    }
                }
            }
            TextShape::Task => {
                let line = task_line(text);
                args.insert("title".into(), Value::String(line.title));
                if let Some(due) = line.due {
                    args.insert("due".into(), Value::String(due));
                }
                if let Some(p) = line.priority {
                    args.insert("priority".into(), Value::String(p.into()));
                }
                if !line.tags.is_empty() {
                    args.insert("tags".into(), strings(line.tags));
                }
            }
        }
    }
}

impl TextShape {
    /// The arguments plain words stand for (what remains once the lead
    /// that picked the form is gone): a note "called Groceries with milk"
    /// has a title and a body, a task "tomorrow with high priority" a due
    /// date and a priority, a fact "that I like tea" is "I like tea", and
    /// a calculation drops the question around it.
    pub fn fill_plain(&self, text: &str, args: &mut Map<String, Value>) {
        let text = text.trim();
        match self {
            TextShape::Expression { param } => {
                let expression = text
                    .trim_end_matches(['?', '.', '!', ' '])
                    .trim_end_matches(" please")
                    .trim();
                if looks_like_a_calculation(expression) {
                    args.insert(param.clone(), Value::String(expression.to_string()));
                }
            }
            TextShape::TitleBody { title, body, .. } => {
                let (heading, rest) = title_and_body(text);
                // One line: the title, with its #tags taken out.
                self.fill(&heading, args);
                if !heading.is_empty() && args.get(title).is_none() {
                    args.insert(title.clone(), Value::String(heading));
                }
                if !rest.is_empty() {
                    args.insert(body.clone(), Value::String(rest));
                }
            }
            TextShape::Task => {
                let (rest, priority) = plain_priority(text);
                self.fill(&rest, args);
                if let Some(p) = priority {
                    args.insert("priority".into(), Value::String(p.into()));
                }
            }
            TextShape::Tagged { .. } => {
                let rest = strip_word(text, "that");
                self.fill(rest, args);
            }
            TextShape::Nothing | TextShape::Whole { .. } => self.fill(text, args),
        }
    }
}

/// Whether plain words hold a calculation: a digit, or a word that names
/// a day.
fn looks_like_a_calculation(text: &str) -> bool {
    const DAYS: [&str; 4] = ["today", "tomorrow", "yesterday", "now"];
    text.chars().any(|c| c.is_ascii_digit())
        || text
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| DAYS.contains(&w.to_lowercase().as_str()) || Date::is_month(w))
}

/// `text` without `word` and the space after it at its start.
fn strip_word<'t>(text: &'t str, word: &str) -> &'t str {
    match text.get(..word.len()) {
        Some(head)
            if head.eq_ignore_ascii_case(word)
                && text[word.len()..].starts_with(char::is_whitespace) =>
        {
            text[word.len()..].trim_start()
        }
        _ => text,
    }
}

/// A note in plain words: "called Groceries with milk, eggs and bread",
/// "about the trip: book the tram", "Groceries: milk". The title is what
/// follows "called", "titled", "named" or "about", up to the first of
/// ":", "saying", "that says", "containing", "with" or a dash; the body is
/// the rest. Without such a word the first line is the title and the
/// following lines the body.
fn title_and_body(text: &str) -> (String, String) {
    let mut rest = text;
    for marker in ["called", "titled", "named", "about"] {
        let stripped = strip_word(rest, marker);
        if stripped.len() != rest.len() {
            rest = stripped;
            break;
        }
    }
    if rest.contains('\n') {
        let (first, more) = rest.split_once('\n').unwrap_or((rest, ""));
        return (first.trim().to_string(), more.trim().to_string());
    }
    let lower = rest.to_lowercase();
    let separator = match lower.find(':') {
        Some(i) => Some((i, 1)),
        None => [
            " saying ",
            " that says ",
            " which says ",
            " containing ",
            " with ",
            " - ",
            " — ",
        ]
        .iter()
        .filter_map(|s| lower.find(s).map(|i| (i, s.len())))
        .min(),
    };
    match separator {
        Some((i, len)) if i > 0 && rest.is_char_boundary(i) && rest.is_char_boundary(i + len) => (
            rest[..i].trim().to_string(),
            rest[i + len..].trim().to_string(),
        ),
        _ => (rest.trim().to_string(), String::new()),
    }
}

/// A priority said in words ("with high priority", "urgent", ", low
/// priority"), taken out of the task's text.
fn plain_priority(text: &str) -> (String, Option<&'static str>) {
    const PHRASES: [(&str, &str); 10] = [
        ("with high priority", "high"),
        ("with a high priority", "high"),
        ("high priority", "high"),
        ("with low priority", "low"),
        ("with a low priority", "low"),
        ("low priority", "low"),
        ("with normal priority", "normal"),
        ("normal priority", "normal"),
        ("urgently", "high"),
        ("urgent", "high"),
    ];
    let lower = text.to_lowercase();
    for (phrase, priority) in PHRASES {
        if let Some(i) = find_phrase(&lower, phrase)
            && text.is_char_boundary(i)
            && text.is_char_boundary(i + phrase.len())
        {
            let joined = format!("{} {}", &text[..i], &text[i + phrase.len()..]);
            let cleaned = joined
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .trim_matches([',', ' ', '.'])
                .replace(" ,", ",");
            return (cleaned, Some(priority));
        }
    }
    (text.to_string(), None)
}

/// Where `phrase` occurs in `text` as whole words.
fn find_phrase(text: &str, phrase: &str) -> Option<usize> {
    text.match_indices(phrase).map(|(i, _)| i).find(|&i| {
        let before = text[..i].chars().next_back();
        let after = text[i + phrase.len()..].chars().next();
        before.is_none_or(|c| !c.is_alphanumeric()) && after.is_none_or(|c| !c.is_alphanumeric())
    })
}

fn strings(list: Vec<String>) -> Value {
    Value::Array(list.into_iter().map(Value::String).collect())
}

/// A `#word` tag: a hash followed by a letter or digit.
fn as_tag(word: &str) -> Option<&str> {
    let rest = word.strip_prefix('#')?;
    rest.chars()
        .next()
        .is_some_and(char::is_alphanumeric)
        .then_some(rest)
}

/// The text without its `#tags`, and the tags.
fn take_tags(text: &str) -> (String, Vec<String>) {
    let mut words = Vec::new();
    let mut tags = Vec::new();
    for w in text.split_whitespace() {
        match as_tag(w) {
            Some(t) => tags.push(t.to_string()),
            None => words.push(w),
        }
    }
    (words.join(" "), tags)
}

/// A task line taken apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskLine {
    pub title: String,
    /// The date phrase as typed ("tomorrow", "March 1"); the skill reads it
    /// against the day it runs.
    pub due: Option<String>,
    pub priority: Option<&'static str>,
    pub tags: Vec<String>,
}

/// The longest date phrase looked for at the end of a task line.
const MAX_DATE_WORDS: usize = 4;

/// Reads "Renew passport tomorrow !high #admin". The due date is the
/// longest date phrase at the end of what remains once the `!priority`
/// and `#tags` are out, as long as a title is left.
pub fn task_line(text: &str) -> TaskLine {
    let mut priority = None;
    let mut tags = Vec::new();
    let mut words: Vec<&str> = Vec::new();
    for w in text.split_whitespace() {
        let marker = w
            .strip_prefix('!')
            .map(str::to_lowercase)
            .and_then(|p| match p.as_str() {
                "high" | "urgent" | "important" => Some("high"),
                "low" => Some("low"),
                "normal" => Some("normal"),
                _ => None,
            });
        if let Some(p) = marker {
            priority = Some(p);
        } else if let Some(t) = as_tag(w) {
            tags.push(t.to_string());
        } else {
            words.push(w);
        }
    }
    let mut due = None;
    let most = MAX_DATE_WORDS.min(words.len().saturating_sub(1));
    for n in (1..=most).rev() {
        let phrase = words[words.len() - n..].join(" ");
        if Date::is_phrase(&phrase) {
            words.truncate(words.len() - n);
            due = Some(phrase);
            break;
        }
    }
    let title = if words.is_empty() {
        text.trim().to_string()
    } else {
        words.join(" ")
    };
    TaskLine {
        title,
        due,
        priority,
        tags,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn filled(shape: TextShape, text: &str) -> Value {
        let mut args = Map::new();
        shape.fill(text, &mut args);
        Value::Object(args)
    }

    #[test]
    fn task_lines() {
        let cases = [
            (
                "Renew passport tomorrow !high",
                json!({"title": "Renew passport", "due": "tomorrow", "priority": "high"}),
            ),
            (
                "Pay rent by March 1 #home !low",
                json!({"title": "Pay rent", "due": "by March 1", "priority": "low", "tags": ["home"]}),
            ),
            (
                "Call the plumber next friday",
                json!({"title": "Call the plumber", "due": "next friday"}),
            ),
            (
                "Book flights in 2 weeks",
                json!({"title": "Book flights", "due": "in 2 weeks"}),
            ),
            ("Water the plants", json!({"title": "Water the plants"})),
            // A lone date is a title, not a due date.
            ("Tomorrow", json!({"title": "Tomorrow"})),
            ("!high", json!({"title": "!high", "priority": "high"})),
            (
                "File taxes 2027-04-15 !urgent",
                json!({"title": "File taxes", "due": "2027-04-15", "priority": "high"}),
            ),
            (
                "Email #work Sam about the #budget",
                json!({"title": "Email Sam about the", "tags": ["work", "budget"]}),
            ),
        ];
        for (text, want) in cases {
            assert_eq!(filled(TextShape::Task, text), want, "{text:?}");
        }
    }

    #[test]
    fn titles_bodies_and_tags() {
        let shape = TextShape::TitleBody {
            title: "title".into(),
            body: "body".into(),
            tags: "tags".into(),
        };
        assert_eq!(
            filled(shape.clone(), "Buy milk and eggs"),
            json!({"title": "Buy milk and eggs"})
        );
        assert_eq!(
            filled(shape.clone(), "Groceries #home\nmilk\neggs"),
            json!({"title": "Groceries", "body": "milk\neggs", "tags": ["home"]})
        );
        assert_eq!(filled(shape.clone(), "#home"), json!({"title": "#home"}));
        assert_eq!(filled(shape, "   "), json!({}));
        let tagged = TextShape::Tagged {
            param: "text".into(),
            tags: "tags".into(),
        };
        assert_eq!(
            filled(tagged, "I prefer metric units #units"),
            json!({"text": "I prefer metric units", "tags": ["units"]})
        );
        assert_eq!(
            filled(TextShape::Whole { param: "q".into() }, " 2 + 2 "),
            json!({"q": "2 + 2"})
        );
        assert_eq!(filled(TextShape::Nothing, "ignored"), json!({}));
    }

    #[test]
    fn placeholders() {
        assert_eq!(TextShape::Nothing.placeholder(), None);
        assert_eq!(
            TextShape::Whole {
                param: "expression".into()
            }
            .placeholder()
            .as_deref(),
            Some("<expression>")
        );
    }
}
