//! The composer's logic, outside any component: the line being typed, the
//! suggestions under it, `/help`, the server resources going with the next
//! message, and what Enter does. A command runs at once, alongside any
//! still running; a message to the assistant is sent, or queued while a
//! reply is coming. Nothing typed is lost: the line is cleared only when
//! what it asked for was taken on, and comes back when that fails.
//!
//! The view renders a [`Composer`] and carries out the [`Effect`]s its
//! methods return, reporting back with [`Composer::finished`],
//! [`Composer::reply_ended`] and friends.

use serde_json::{Map, Value};

use crate::assistant::agent::{Conversation, Role};
use crate::discovery::Discovery;
use crate::skill::SkillId;
use crate::skill::registry::Registry;
use crate::ui::command::{self, CommandError, CommandInput, Help};
use crate::ui::mcp_composer::{
    Attachment, PromptCommand, attachments_text, matching, split_attachments,
};

/// At most this many skill suggestions show under a `/` line.
const MAX_SUGGESTIONS: usize = 8;
/// And this many server prompts.
const MAX_PROMPTS: usize = 6;

/// What the composer needs to know about the rest of the app when it
/// acts. The view builds one from its signals.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    pub registry: &'a Registry,
    /// Prompts of connected MCP servers: `/server:prompt`.
    pub prompts: &'a [PromptCommand],
    /// Names of installed Agent Skills packages: `/name` activates one.
    pub packages: &'a [String],
    /// A model is set up, so free text is a message to it.
    pub has_model: bool,
    /// The assistant is replying in this conversation.
    pub replying: bool,
    /// Without a model: the skills discovery found for the free text.
    pub found: Option<&'a Discovery>,
    /// Pictures are attached to the next message.
    pub pictures: bool,
}

/// What the composer says when pictures are attached and no model is set
/// up to see them.
pub const PICTURES_NEED_A_MODEL: &str =
    "Pictures go to a model, and none is set up: choose one in Settings → Model provider.";

/// Keys the composer acts on; everything else is typing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    Up,
    Down,
    Tab,
    /// Enter without Shift.
    Enter,
    Escape,
}

impl Key {
    /// The key a browser names `key` (with Shift held or not), when the
    /// composer acts on it.
    pub fn from_name(key: &str, shift: bool) -> Option<Key> {
        match key {
            "ArrowDown" => Some(Key::Down),
            "ArrowUp" => Some(Key::Up),
            "Tab" if !shift => Some(Key::Tab),
            "Enter" if !shift => Some(Key::Enter),
            "Escape" => Some(Key::Escape),
            _ => None,
        }
    }
}

/// Whether a key the composer left alone stops the code run under way:
/// Esc does, while code of this conversation runs and no reply is coming
/// (a reply's own Stop ends its runs too).
pub fn key_stops_code(key: Key, handled: &Handled, code_running: bool, replying: bool) -> bool {
    !handled.prevent_default && key == Key::Escape && code_running && !replying
}

/// What the person typed in a conversation, oldest first: their messages
/// (without attached resources) and the commands they ran (an undo is
/// not typed, so it is not among them). Up in an empty line recalls them.
pub fn lines_typed(c: &Conversation) -> Vec<String> {
    c.messages
        .iter()
        .filter(|m| match m.role {
            Role::User => true,
            Role::Command => m.from_form || m.content.starts_with('/'),
            Role::Assistant => false,
        })
        .map(|m| split_attachments(&m.content).0.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// What the view is asked to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// Run a skill now; report its end with [`Composer::finished`].
    Run {
        ticket: u64,
        skill: SkillId,
        arguments: Value,
        /// What the person typed: the conversation keeps it with the
        /// result, and titles a new conversation with it.
        line: String,
        /// The arguments came from a form, which `line` opened.
        from_form: bool,
    },
    /// Send a message to the assistant; report a refusal with
    /// [`Composer::send_failed`].
    Send { message: String },
    /// Open a skill's form with these arguments carried in.
    OpenForm { skill: SkillId, prefill: Value },
    /// Ask a server for a prompt's text; report with
    /// [`Composer::prompt_ready`] or [`Composer::prompt_failed`].
    FetchPrompt {
        ticket: u64,
        command: PromptCommand,
        input: CommandInput,
    },
    /// Stop the reply under way.
    Stop,
}

/// A key press handled: whether the browser's default must be stopped,
/// and what to do.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Handled {
    pub prevent_default: bool,
    pub effects: Vec<Effect>,
}

/// One suggestion under a `/` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suggestion {
    /// The command word the suggestion completes to.
    pub word: String,
    pub label: String,
    /// The skill's icon; server prompts have none.
    pub icon: String,
}

/// Something under way that the composer started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Running {
    pub ticket: u64,
    pub line: String,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Composer {
    pub text: String,
    /// The highlighted suggestion or found skill.
    pub selected: usize,
    pub error: Option<String>,
    pub notice: Option<String>,
    pub help: Option<Help>,
    /// Server resources going with the next message.
    pub attachments: Vec<Attachment>,
    /// Messages waiting for the reply under way to end, oldest first.
    pub queued: Vec<String>,
    /// Commands and prompt fetches under way.
    pub running: Vec<Running>,
    /// Lines run or sent, oldest first (the open conversation's, then this
    /// composer's): Up in an empty line brings them back, newest first.
    pub history: Vec<String>,
    /// Which line of `history` Up brought back, while the line is still it.
    recalled: Option<usize>,
    /// The line a form was opened from; it is cleared when the form runs.
    form_line: Option<String>,
    next_ticket: u64,
}

impl Composer {
    pub fn new() -> Self {
        Self::default()
    }

    /// The person typed: the line changes and old errors go.
    pub fn input(&mut self, text: String) {
        self.text = text;
        self.selected = 0;
        self.error = None;
    }

    /// The lines of the conversation now open, oldest first, for Up; lines
    /// run here since stay after them.
    pub fn set_history(&mut self, lines: Vec<String>) {
        self.history = lines;
        self.recalled = None;
    }

    fn ticket(&mut self) -> u64 {
        self.next_ticket += 1;
        self.next_ticket
    }

    /// Skills (by their command words) and server prompts that start with
    /// what follows the slash, while no input follows the name.
    pub fn suggestions(&self, cx: &Context) -> Vec<Suggestion> {
        let Some(partial) = self.text.strip_prefix('/') else {
            return Vec::new();
        };
        if partial.contains(char::is_whitespace) {
            return Vec::new();
        }
        let partial = partial.to_lowercase();
        let mut out: Vec<Suggestion> = Vec::new();
        for skill in cx.registry.iter() {
            let mut words: Vec<(&str, &str)> = skill
                .commands
                .iter()
                .filter(|f| f.verb.is_none())
                .map(|f| (f.word.as_str(), f.summary.as_str()))
                .collect();
            // The skill's own id first, then its other names.
            words.retain(|(w, _)| *w != skill.id.as_str());
            words.insert(0, (skill.id.as_str(), skill.name.as_str()));
            let name_matches = skill.name.to_lowercase().starts_with(&partial);
            for (word, summary) in words {
                if out.iter().any(|s| s.word == word) {
                    continue;
                }
                let own = word == skill.id.as_str();
                if word.starts_with(&partial) || (own && name_matches) {
                    out.push(Suggestion {
                        word: word.to_string(),
                        label: if own {
                            skill.name.clone()
                        } else {
                            summary.to_string()
                        },
                        icon: skill.icon.clone(),
                    });
                }
            }
        }
        out.truncate(MAX_SUGGESTIONS);
        out.extend(
            matching(cx.prompts, &partial)
                .into_iter()
                .take(MAX_PROMPTS)
                .map(|c| Suggestion {
                    word: c.command.clone(),
                    label: prompt_label(c),
                    icon: "chat".to_string(),
                }),
        );
        out
    }

    /// How many choices the arrow keys move through.
    fn choices(&self, cx: &Context) -> usize {
        let n = self.suggestions(cx).len();
        if n > 0 {
            return n;
        }
        cx.found.map_or(0, |d| d.skills.len())
    }

    /// Fills in a suggestion: `/word `.
    pub fn complete(&mut self, word: &str) {
        self.text = format!("/{word} ");
        self.selected = 0;
    }

    pub fn key(&mut self, key: Key, cx: &Context) -> Handled {
        let handled = |effects| Handled {
            prevent_default: true,
            effects,
        };
        match key {
            Key::Up | Key::Down => {
                let n = self.choices(cx);
                if n == 0 {
                    return match self.recall(key == Key::Up) {
                        true => handled(Vec::new()),
                        false => Handled::default(),
                    };
                }
                self.selected = match key {
                    Key::Up => (self.selected + n - 1) % n,
                    _ => (self.selected + 1) % n,
                };
                handled(Vec::new())
            }
            Key::Tab => {
                let options = self.suggestions(cx);
                if options.is_empty() {
                    return Handled::default();
                }
                let i = self.selected.min(options.len() - 1);
                self.complete(&options[i].word);
                handled(Vec::new())
            }
            Key::Enter => {
                let options = self.suggestions(cx);
                // Enter on a bare "/ca" picks the highlighted suggestion;
                // on a whole word ("/notes") it runs.
                let whole = options.iter().any(|o| self.text == format!("/{}", o.word));
                if !options.is_empty() && !whole && !self.text.contains(' ') {
                    let i = self.selected.min(options.len() - 1);
                    self.complete(&options[i].word);
                    return handled(Vec::new());
                }
                handled(self.submit(cx))
            }
            Key::Escape => {
                if cx.replying {
                    // Stopping the reply keeps what waited for it: the
                    // queued messages come back into the line, unsent.
                    let mut back: Vec<String> = std::mem::take(&mut self.queued);
                    if !back.is_empty() {
                        if !self.text.trim().is_empty() {
                            back.push(std::mem::take(&mut self.text));
                        }
                        self.text = back.join("\n\n");
                        self.notice = Some(
                            "Stopped. What you had queued is back in the composer, not sent."
                                .to_string(),
                        );
                    }
                    return handled(vec![Effect::Stop]);
                }
                let had = self.error.is_some() || self.help.is_some();
                self.error = None;
                self.help = None;
                Handled {
                    prevent_default: had,
                    effects: Vec::new(),
                }
            }
        }
    }

    /// Up (`back`) or Down through the lines run before, while the line
    /// is empty or still the one brought back; says whether it moved.
    /// Down past the newest empties the line again.
    fn recall(&mut self, back: bool) -> bool {
        let showing = match self.recalled {
            Some(i) if self.history.get(i) == Some(&self.text) => Some(i),
            _ if self.text.trim().is_empty() => None,
            _ => return false,
        };
        let next = match (showing, back) {
            (None, true) => self.history.len().checked_sub(1),
            (None, false) => return false,
            (Some(i), true) => Some(i.saturating_sub(1)),
            (Some(i), false) if i + 1 < self.history.len() => Some(i + 1),
            (Some(_), false) => {
                self.text.clear();
                self.recalled = None;
                return true;
            }
        };
        let Some(i) = next else {
            return false;
        };
        self.text = self.history[i].clone();
        self.recalled = Some(i);
        self.selected = 0;
        true
    }

    /// Remembers a line that ran or was sent, for Up.
    fn remember(&mut self, line: &str) {
        let line = line.trim();
        if !line.is_empty() && self.history.last().map(String::as_str) != Some(line) {
            self.history.push(line.to_string());
        }
        self.recalled = None;
    }

    /// Enter or the Run/Send button.
    pub fn submit(&mut self, cx: &Context) -> Vec<Effect> {
        let line = self.text.clone();
        if line.trim().is_empty() {
            // Pictures alone are a message; the queue holds only words, so
            // they wait in the tray while a reply runs.
            if cx.pictures && !cx.replying {
                if !cx.has_model {
                    self.error = Some(PICTURES_NEED_A_MODEL.into());
                    return Vec::new();
                }
                self.error = None;
                self.notice = None;
                return vec![Effect::Send {
                    message: String::new(),
                }];
            }
            return Vec::new();
        }
        self.error = None;
        if let Some(rest) = help_request(&line) {
            match command::help(cx.registry, rest) {
                Ok(h) => {
                    self.help = Some(h);
                    self.text.clear();
                }
                Err(e) => self.error = Some(e.to_string()),
            }
            return Vec::new();
        }
        let parsed = match command::parse(&line) {
            Ok(p) => p,
            Err(e) => {
                self.error = Some(e.to_string());
                return Vec::new();
            }
        };
        let Some(parsed) = parsed else {
            return self.free_text(line, cx);
        };
        if parsed.name.contains(':') {
            let Some(cmd) = cx.prompts.iter().find(|c| c.command == parsed.name) else {
                self.error = Some(format!(
                    "No connected server offers the prompt /{}; type / to see what is offered.",
                    parsed.name
                ));
                return Vec::new();
            };
            let ticket = self.ticket();
            self.running.push(Running {
                ticket,
                line: line.clone(),
            });
            self.text.clear();
            self.notice = None;
            return vec![Effect::FetchPrompt {
                ticket,
                command: cmd.clone(),
                input: parsed.input,
            }];
        }
        // `/name` activates the installed Agent Skill of that name (also
        // one hidden from the model), unless a skill or command has it.
        let taken = cx.registry.get_str(&parsed.name).is_some()
            || cx
                .registry
                .iter()
                .any(|s| s.commands.iter().any(|f| f.word == parsed.name));
        if !taken && cx.packages.contains(&parsed.name) {
            let Some(skill) = cx.registry.get_str("activate_skill") else {
                self.error = Some("Agent Skills are not available here.".to_string());
                return Vec::new();
            };
            let mut args = Map::new();
            args.insert("name".into(), Value::String(parsed.name.clone()));
            return vec![self.start(skill.id.clone(), Value::Object(args), line, false)];
        }
        match command::prepare(cx.registry, &parsed) {
            Ok(p) => vec![self.start(p.skill.id.clone(), p.arguments, line, false)],
            Err(CommandError::NeedsInput {
                id, prefill, word, ..
            }) => {
                self.form_line = Some(line);
                self.notice = Some(format!("/{word} needs more: fill in the form."));
                vec![Effect::OpenForm {
                    skill: id,
                    prefill: *prefill,
                }]
            }
            Err(CommandError::NoTextParameter { id }) => {
                let Some(skill) = cx.registry.get_str(&id) else {
                    return Vec::new();
                };
                self.form_line = Some(line);
                self.notice = Some(format!(
                    "/{id} does not read plain text: fill in its form instead."
                ));
                vec![Effect::OpenForm {
                    skill: skill.id.clone(),
                    prefill: Value::Object(Map::new()),
                }]
            }
            Err(e) => {
                self.error = Some(e.to_string());
                Vec::new()
            }
        }
    }

    /// A command taken on: it joins the running ones and the line clears.
    fn start(&mut self, skill: SkillId, arguments: Value, line: String, from_form: bool) -> Effect {
        self.remember(&line);
        let others = self.running.len();
        let ticket = self.ticket();
        self.running.push(Running {
            ticket,
            line: line.clone(),
        });
        if self.text == line {
            self.text.clear();
        }
        self.selected = 0;
        self.help = None;
        self.notice = (others > 0).then(|| {
            format!(
                "Running alongside {} — commands never wait for each other.",
                match others {
                    1 => "the command already under way".to_string(),
                    n => format!("{n} commands already under way"),
                }
            )
        });
        Effect::Run {
            ticket,
            skill,
            arguments,
            line,
            from_form,
        }
    }

    fn free_text(&mut self, line: String, cx: &Context) -> Vec<Effect> {
        if cx.has_model {
            self.remember(&line);
            let message = match self.attachments.is_empty() {
                true => line.clone(),
                false => format!("{line}\n\n{}", attachments_text(&self.attachments)),
            };
            self.text.clear();
            self.attachments.clear();
            if cx.replying {
                self.queued.push(message);
                self.notice = Some(queued_notice(self.queued.len()));
                return Vec::new();
            }
            self.notice = None;
            return vec![Effect::Send { message }];
        }
        match cx.found {
            Some(d) if !d.skills.is_empty() => {
                let i = self.selected.min(d.skills.len() - 1);
                let id = d.skills[i].id.clone();
                let prefill = cx
                    .registry
                    .get(&id)
                    .map(|s| command::carry(s, &line))
                    .unwrap_or_else(|| Value::Object(Map::new()));
                self.form_line = Some(line);
                vec![Effect::OpenForm { skill: id, prefill }]
            }
            Some(d) => {
                self.error = Some(d.message.clone());
                Vec::new()
            }
            None => Vec::new(),
        }
    }

    /// Picks a found skill with the mouse: its form opens with the line.
    pub fn pick_found(&mut self, id: &SkillId, cx: &Context) -> Vec<Effect> {
        let Some(skill) = cx.registry.get(id) else {
            return Vec::new();
        };
        self.form_line = Some(self.text.clone());
        vec![Effect::OpenForm {
            skill: skill.id.clone(),
            prefill: command::carry(skill, &self.text),
        }]
    }

    /// The form ran: the line it came from goes, unless the person has
    /// typed something else since.
    pub fn form_ran(&mut self, skill: SkillId, arguments: Value, title: String) -> Effect {
        let from = self.form_line.take();
        let line = from.clone().unwrap_or(title);
        let effect = self.start(skill, arguments, line, true);
        if from.is_some_and(|f| f == self.text) {
            self.text.clear();
        }
        self.notice = None;
        effect
    }

    /// The form was closed without running: the line stays as it was.
    pub fn form_closed(&mut self) {
        self.form_line = None;
        self.notice = None;
    }

    /// A command ended.
    pub fn finished(&mut self, ticket: u64) {
        self.running.retain(|r| r.ticket != ticket);
        if self.running.is_empty() {
            self.notice = None;
        }
    }

    /// The assistant would not take a message: it comes back into the
    /// line, before anything typed since.
    pub fn send_failed(&mut self, message: String, error: String) {
        self.text = if self.text.trim().is_empty() {
            message
        } else {
            format!("{message}\n\n{}", self.text)
        };
        self.error = Some(error);
    }

    /// The reply ended: the oldest queued message goes now.
    pub fn reply_ended(&mut self) -> Vec<Effect> {
        if self.queued.is_empty() {
            return Vec::new();
        }
        let message = self.queued.remove(0);
        self.notice = (!self.queued.is_empty()).then(|| queued_notice(self.queued.len()));
        vec![Effect::Send { message }]
    }

    /// Another conversation opened: every queued message comes back into
    /// the line, unsent.
    pub fn left_conversation(&mut self) {
        while !self.queued.is_empty() {
            self.unqueue(0);
        }
    }

    /// Takes a queued message back out, into the line.
    pub fn unqueue(&mut self, index: usize) {
        if index < self.queued.len() {
            let message = self.queued.remove(index);
            self.text = if self.text.trim().is_empty() {
                message
            } else {
                format!("{}\n\n{message}", self.text)
            };
            self.notice = (!self.queued.is_empty()).then(|| queued_notice(self.queued.len()));
        }
    }

    /// A server's prompt arrived: its text joins the line.
    pub fn prompt_ready(&mut self, ticket: u64, text: String, what: String) {
        self.running.retain(|r| r.ticket != ticket);
        self.text = if self.text.trim().is_empty() {
            text
        } else {
            format!("{}\n\n{text}", self.text)
        };
        self.notice = Some(format!(
            "{what} is in the composer; edit it and send it to the assistant."
        ));
    }

    pub fn prompt_failed(&mut self, ticket: u64, error: String) {
        let line = self
            .running
            .iter()
            .find(|r| r.ticket == ticket)
            .map(|r| r.line.clone());
        self.running.retain(|r| r.ticket != ticket);
        if let Some(line) = line
            && self.text.trim().is_empty()
        {
            self.text = line;
        }
        self.error = Some(error);
    }

    pub fn attach(&mut self, attachment: Attachment) {
        self.attachments.push(attachment);
    }

    pub fn detach(&mut self, index: usize) {
        if index < self.attachments.len() {
            self.attachments.remove(index);
        }
    }

    /// What is under way, in words, for the line under the composer.
    pub fn status(&self) -> Option<String> {
        let mut parts = Vec::new();
        match self.running.as_slice() {
            [] => {}
            [one] => parts.push(format!("Running {}", short(&one.line))),
            many => parts.push(format!("Running {} commands", many.len())),
        }
        if !self.queued.is_empty() {
            parts.push(queued_notice(self.queued.len()));
        }
        (!parts.is_empty()).then(|| parts.join(" · "))
    }
}

fn queued_notice(n: usize) -> String {
    match n {
        1 => "Queued: your message goes when the reply under way ends.".to_string(),
        n => format!("Queued: {n} messages go, one by one, when the reply under way ends."),
    }
}

/// A line cut to something that fits a status line.
fn short(line: &str) -> String {
    let line = line.lines().next().unwrap_or("").trim();
    if line.chars().count() > 40 {
        format!("{}…", line.chars().take(39).collect::<String>())
    } else {
        line.to_string()
    }
}

/// `/help` and `/help <name>`: `Some(None)` and `Some(Some(name))`.
fn help_request(line: &str) -> Option<Option<&str>> {
    let rest = line.trim().strip_prefix("/help")?;
    if rest.is_empty() {
        return Some(None);
    }
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let name = rest.trim();
    Some((!name.is_empty()).then_some(name))
}

fn prompt_label(c: &PromptCommand) -> String {
    let args = if c.arguments.is_empty() {
        String::new()
    } else {
        format!(
            " ({})",
            c.arguments
                .iter()
                .map(|a| if a.required {
                    a.name.clone()
                } else {
                    format!("{}?", a.name)
                })
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    format!("{}{args} — prompt from {}", c.title, c.server)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin;
    use crate::discovery::DiscoveredSkill;
    use crate::mcp::skills::ServerId;
    use serde_json::json;

    struct World {
        registry: Registry,
        prompts: Vec<PromptCommand>,
        packages: Vec<String>,
        has_model: bool,
        replying: bool,
        found: Option<Discovery>,
        pictures: bool,
    }

    impl World {
        fn new() -> Self {
            World {
                registry: builtin::registry().unwrap(),
                prompts: vec![PromptCommand {
                    server: ServerId::new("everything").unwrap(),
                    prompt: "args-prompt".into(),
                    command: "everything:args-prompt".into(),
                    title: "Args prompt".into(),
                    description: None,
                    arguments: Vec::new(),
                }],
                packages: vec!["pdf-tools".into()],
                has_model: false,
                replying: false,
                found: None,
                pictures: false,
            }
        }

        fn cx(&self) -> Context<'_> {
            Context {
                registry: &self.registry,
                prompts: &self.prompts,
                packages: &self.packages,
                has_model: self.has_model,
                replying: self.replying,
                found: self.found.as_ref(),
                pictures: self.pictures,
            }
        }
    }

    /// Types `line` and presses Enter.
    fn enter(c: &mut Composer, w: &World, line: &str) -> Vec<Effect> {
        c.input(line.to_string());
        c.key(Key::Enter, &w.cx()).effects
    }

    fn run_of(effects: &[Effect]) -> (u64, String, Value) {
        match effects {
            [
                Effect::Run {
                    ticket,
                    skill,
                    arguments,
                    ..
                },
            ] => (*ticket, skill.to_string(), arguments.clone()),
            other => panic!("expected one run, got {other:?}"),
        }
    }

    #[test]
    fn pictures_alone_are_a_message_to_a_model_and_wait_out_a_reply() {
        let mut w = World::new();
        let mut c = Composer::new();
        // Nothing typed and nothing attached: Enter does nothing.
        assert!(enter(&mut c, &w, "").is_empty());
        w.pictures = true;
        // Without a model, pictures have nowhere to go; it says so.
        assert!(enter(&mut c, &w, "").is_empty());
        assert_eq!(c.error.as_deref(), Some(PICTURES_NEED_A_MODEL));
        w.has_model = true;
        assert_eq!(
            enter(&mut c, &w, "  "),
            vec![Effect::Send {
                message: String::new()
            }]
        );
        assert_eq!(c.error, None);
        // While a reply runs they wait in the tray, sent with nothing yet.
        w.replying = true;
        assert!(enter(&mut c, &w, "").is_empty());
        assert!(c.queued.is_empty());
    }

    #[test]
    fn a_command_typed_during_a_run_runs_alongside_and_nothing_is_lost() {
        let w = World::new();
        let mut c = Composer::new();
        let (first, skill, args) = run_of(&enter(&mut c, &w, "/run_javascript while(true){}"));
        assert_eq!(
            (skill.as_str(), args),
            ("run_javascript", json!({"code": "while(true){}"}))
        );
        assert_eq!(c.text, "");
        assert_eq!(
            c.status().as_deref(),
            Some("Running /run_javascript while(true){}")
        );

        let (second, skill, args) = run_of(&enter(&mut c, &w, "/calc 6*7"));
        assert_eq!(
            (skill.as_str(), args),
            ("calculator", json!({"expression": "6*7"}))
        );
        assert_ne!(first, second);
        assert_eq!(
            c.notice.as_deref(),
            Some(
                "Running alongside the command already under way — commands never wait for each other."
            )
        );
        assert_eq!(c.status().as_deref(), Some("Running 2 commands"));

        // Typed but not sent: the end of a run leaves it alone.
        c.input("/calc 1+1".into());
        c.finished(second);
        c.finished(first);
        assert_eq!(c.text, "/calc 1+1");
        assert_eq!(c.status(), None);
        assert_eq!(c.notice, None);
    }

    #[test]
    fn a_message_during_a_reply_is_queued_then_sent_when_it_ends() {
        let mut w = World::new();
        w.has_model = true;
        let mut c = Composer::new();
        assert_eq!(
            enter(&mut c, &w, "Tell me a story"),
            [Effect::Send {
                message: "Tell me a story".into()
            }]
        );
        w.replying = true;
        assert_eq!(enter(&mut c, &w, "And another"), []);
        assert_eq!(enter(&mut c, &w, "And a third"), []);
        assert_eq!(c.text, "");
        assert_eq!(
            c.status().as_deref(),
            Some("Queued: 2 messages go, one by one, when the reply under way ends.")
        );
        // Commands still run at once during a reply.
        let (_, skill, _) = run_of(&enter(&mut c, &w, "/calc 1+1"));
        assert_eq!(skill, "calculator");

        w.replying = false;
        assert_eq!(
            c.reply_ended(),
            [Effect::Send {
                message: "And another".into()
            }]
        );
        assert_eq!(
            c.reply_ended(),
            [Effect::Send {
                message: "And a third".into()
            }]
        );
        assert_eq!(c.reply_ended(), []);
    }

    #[test]
    fn esc_stops_the_reply_and_brings_queued_messages_back_unsent() {
        let mut w = World::new();
        w.has_model = true;
        w.replying = true;
        let mut c = Composer::new();
        enter(&mut c, &w, "queued one");
        c.input("half typed".into());
        let h = c.key(Key::Escape, &w.cx());
        assert_eq!(h.effects, [Effect::Stop]);
        assert!(h.prevent_default);
        assert_eq!(c.text, "queued one\n\nhalf typed");
        assert!(c.queued.is_empty());
        // Without a reply, Esc only clears what the composer shows.
        w.replying = false;
        c.error = Some("x".into());
        let h = c.key(Key::Escape, &w.cx());
        assert_eq!((h.effects, c.error.clone()), (vec![], None));
    }

    #[test]
    fn up_in_an_empty_line_brings_back_what_ran() {
        let w = World::new();
        let mut c = Composer::new();
        c.set_history(vec!["/calc 1+1".into()]);
        enter(&mut c, &w, "/calc 6*7");
        enter(&mut c, &w, "/note Buy milk");
        assert_eq!(c.text, "");
        let up = |c: &mut Composer| c.key(Key::Up, &w.cx());
        let down = |c: &mut Composer| c.key(Key::Down, &w.cx());
        assert!(up(&mut c).prevent_default);
        assert_eq!(c.text, "/note Buy milk");
        up(&mut c);
        assert_eq!(c.text, "/calc 6*7");
        up(&mut c);
        up(&mut c);
        assert_eq!(c.text, "/calc 1+1", "the oldest stays");
        down(&mut c);
        assert_eq!(c.text, "/calc 6*7");
        down(&mut c);
        down(&mut c);
        assert_eq!(c.text, "", "past the newest, the line is empty again");
        assert!(!down(&mut c).prevent_default);
        // A line being typed is never replaced.
        c.input("/calc 2".into());
        assert!(!up(&mut c).prevent_default);
        assert_eq!(c.text, "/calc 2");
        // An edited recall is the person's now.
        c.input(String::new());
        up(&mut c);
        c.input("/note Buy oat milk".into());
        assert!(!up(&mut c).prevent_default);
        // The same line twice is remembered once.
        enter(&mut c, &w, "/note Buy oat milk");
        enter(&mut c, &w, "/note Buy oat milk");
        assert_eq!(c.history.len(), 4);
    }

    #[test]
    fn a_refused_message_comes_back() {
        let mut w = World::new();
        w.has_model = true;
        let mut c = Composer::new();
        enter(&mut c, &w, "hello");
        c.input("more".into());
        c.send_failed("hello".into(), "no provider".into());
        assert_eq!(c.text, "hello\n\nmore");
        assert_eq!(c.error.as_deref(), Some("no provider"));
    }

    #[test]
    fn suggestions_complete_command_words() {
        let w = World::new();
        let mut c = Composer::new();
        c.input("/no".into());
        let words: Vec<String> = c.suggestions(&w.cx()).into_iter().map(|s| s.word).collect();
        assert_eq!(words, ["notes", "note"]);
        c.key(Key::Down, &w.cx());
        assert_eq!(c.selected, 1);
        c.key(Key::Tab, &w.cx());
        assert_eq!(c.text, "/note ");
        // Enter on a bare partial word completes instead of running.
        c.input("/ca".into());
        let h = c.key(Key::Enter, &w.cx());
        assert_eq!((h.effects, c.text.as_str()), (vec![], "/calculator "));
        // Server prompts come after the skills.
        c.input("/ev".into());
        let s = c.suggestions(&w.cx());
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].word, "everything:args-prompt");
        assert_eq!(s[0].label, "Args prompt — prompt from everything");
        c.input("/calc 1".into());
        assert!(c.suggestions(&w.cx()).is_empty());
    }

    #[test]
    fn help_is_shown_in_the_composer() {
        let w = World::new();
        let mut c = Composer::new();
        assert_eq!(enter(&mut c, &w, "/help tasks"), []);
        let help = c.help.clone().unwrap();
        assert_eq!(help.title, "Help: Tasks");
        assert_eq!(
            help.entries[0].examples[0],
            "/task Renew passport tomorrow !high"
        );
        assert_eq!(c.text, "");
        c.key(Key::Escape, &w.cx());
        assert_eq!(c.help, None);
        assert_eq!(enter(&mut c, &w, "/help"), []);
        assert_eq!(c.help.as_ref().unwrap().title, "Commands");
        enter(&mut c, &w, "/help zzzzzz");
        assert_eq!(
            c.error.as_deref(),
            Some("unknown command /zzzzzz. Type / to see the skills you can run, or /help")
        );
        assert_eq!(c.text, "/help zzzzzz");
    }

    #[test]
    fn errors_keep_the_line() {
        let w = World::new();
        let mut c = Composer::new();
        assert_eq!(enter(&mut c, &w, "/calx 2+2"), []);
        assert_eq!(
            c.error.as_deref(),
            Some("unknown command /calx. Did you mean /calculator?")
        );
        assert_eq!(c.text, "/calx 2+2");
        c.input("/calx 2+3".into());
        assert_eq!(c.error, None);
    }

    #[test]
    fn forms_open_with_what_was_typed_and_clear_only_that_line() {
        let mut w = World::new();
        let mut c = Composer::new();
        // A command that needs more opens its form, the line kept.
        assert_eq!(
            enter(&mut c, &w, "/note"),
            [Effect::OpenForm {
                skill: SkillId::new("notes").unwrap(),
                prefill: json!({"action": "create"})
            }]
        );
        assert_eq!(c.text, "/note");
        let (_, skill, args) = run_of(&[c.form_ran(
            SkillId::new("notes").unwrap(),
            json!({"action": "create", "title": "x"}),
            "Notes".into(),
        )]);
        assert_eq!(
            (skill.as_str(), args),
            ("notes", json!({"action": "create", "title": "x"}))
        );
        assert_eq!(c.text, "");

        // Free text without a model: the found skill's form, carrying it.
        w.found = Some(Discovery {
            skills: vec![DiscoveredSkill {
                id: SkillId::new("notes").unwrap(),
                name: "Notes".into(),
                description: String::new(),
                tier: crate::skill::Tier::Core,
            }],
            packages: Vec::new(),
            categories: Vec::new(),
            message: String::new(),
        });
        assert_eq!(
            enter(&mut c, &w, "jot down an idea"),
            [Effect::OpenForm {
                skill: SkillId::new("notes").unwrap(),
                prefill: json!({"action": "create", "title": "an idea"})
            }]
        );
        // Typed over while the form was open: the new text stays.
        c.input("something else".into());
        c.form_ran(
            SkillId::new("notes").unwrap(),
            json!({"action": "list"}),
            "Notes".into(),
        );
        assert_eq!(c.text, "something else");
        c.form_closed();
    }

    #[test]
    fn prompts_packages_and_attachments() {
        let mut w = World::new();
        let mut c = Composer::new();
        let fx = enter(&mut c, &w, "/everything:args-prompt Lisbon");
        let ticket = match fx.as_slice() {
            [Effect::FetchPrompt { ticket, input, .. }] => {
                assert_eq!(*input, CommandInput::Text("Lisbon".into()));
                *ticket
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(c.text, "");
        c.input("draft".into());
        c.prompt_ready(ticket, "Tell me about Lisbon".into(), "The prompt".into());
        assert_eq!(c.text, "draft\n\nTell me about Lisbon");
        assert!(c.running.is_empty());

        let fx = enter(&mut c, &w, "/everything:args-prompt");
        let [Effect::FetchPrompt { ticket, .. }] = fx.as_slice() else {
            panic!("{fx:?}")
        };
        c.prompt_failed(*ticket, "the server said no".into());
        assert_eq!(c.text, "/everything:args-prompt");
        enter(&mut c, &w, "/nowhere:prompt");
        assert!(
            c.error
                .as_deref()
                .unwrap()
                .starts_with("No connected server")
        );

        // An installed Agent Skill by name.
        let mut r = builtin::registry().unwrap();
        r.register(
            crate::skill::SkillDefinition::new(
                SkillId::new("activate_skill").unwrap(),
                "Activate skill",
                crate::skill::Tier::Core,
                crate::skill::Category::Productivity,
            )
            .with_description("d")
            .with_tags(["t"])
            .with_examples(["e"]),
        )
        .unwrap();
        w.registry = r;
        let (_, skill, args) = run_of(&enter(&mut c, &w, "/pdf-tools"));
        assert_eq!(
            (skill.as_str(), args),
            ("activate_skill", json!({"name": "pdf-tools"}))
        );

        // Attachments go with the next message, and only with it.
        w.has_model = true;
        c.attach(Attachment {
            server: ServerId::new("everything").unwrap(),
            uri: "test://a".into(),
            name: "A".into(),
            mime_type: Some("text/plain".into()),
            text: Some("alpha".into()),
            binary_bytes: None,
            truncated: false,
        });
        let fx = enter(&mut c, &w, "read this");
        let [Effect::Send { message }] = fx.as_slice() else {
            panic!("{fx:?}")
        };
        assert!(message.starts_with("read this\n\n<attachment server="));
        assert!(c.attachments.is_empty());
        c.attach(Attachment {
            server: ServerId::new("everything").unwrap(),
            uri: "test://b".into(),
            name: "B".into(),
            mime_type: None,
            text: Some("beta".into()),
            binary_bytes: None,
            truncated: false,
        });
        c.detach(0);
        assert!(c.attachments.is_empty());
    }

    #[test]
    fn keys_the_composer_acts_on_are_named_as_the_browser_names_them() {
        assert_eq!(Key::from_name("ArrowUp", false), Some(Key::Up));
        assert_eq!(Key::from_name("ArrowDown", true), Some(Key::Down));
        assert_eq!(Key::from_name("Enter", false), Some(Key::Enter));
        // Shift+Enter is a new line and Shift+Tab leaves the field.
        assert_eq!(Key::from_name("Enter", true), None);
        assert_eq!(Key::from_name("Tab", true), None);
        assert_eq!(Key::from_name("Escape", true), Some(Key::Escape));
        assert_eq!(Key::from_name("a", false), None);
    }

    #[test]
    fn esc_stops_a_code_run_only_when_nothing_else_took_it() {
        let left = Handled::default();
        let taken = Handled {
            prevent_default: true,
            effects: Vec::new(),
        };
        assert!(key_stops_code(Key::Escape, &left, true, false));
        assert!(!key_stops_code(Key::Escape, &taken, true, false));
        assert!(!key_stops_code(Key::Escape, &left, false, false));
        // During a reply Esc is the reply's: its Stop ends its runs too.
        assert!(!key_stops_code(Key::Escape, &left, true, true));
        assert!(!key_stops_code(Key::Up, &left, true, false));
    }

    #[test]
    fn leaving_a_conversation_brings_every_queued_message_back_unsent() {
        let mut w = World::new();
        w.has_model = true;
        w.replying = true;
        let mut c = Composer::new();
        assert_eq!(enter(&mut c, &w, "First"), []);
        assert_eq!(enter(&mut c, &w, "Second"), []);
        c.input("typing".into());
        c.left_conversation();
        assert!(c.queued.is_empty());
        assert_eq!(c.text, "typing\n\nFirst\n\nSecond");
        assert_eq!(c.reply_ended(), []);
    }

    #[test]
    fn the_lines_typed_are_messages_and_commands_without_attachments() {
        use crate::assistant::agent::Message;
        let mut conv = Conversation::new("c1", 0.0);
        let attached =
            "Summarize\n\n<attachment server=\"s\" uri=\"u\" name=\"n\">\nx\n</attachment>";
        conv.messages = vec![
            Message::user("m1".into(), "hello", 0.0),
            Message::assistant("m2".into(), 0.0),
            Message::user("m3".into(), attached, 0.0),
            Message {
                role: Role::Command,
                ..Message::user("m4".into(), "/calc 1+1", 0.0)
            },
            // An undo is not typed; a form's line is.
            Message {
                role: Role::Command,
                ..Message::user("m5".into(), "Undo: note added", 0.0)
            },
            Message {
                role: Role::Command,
                from_form: true,
                ..Message::user("m6".into(), "Add a note", 0.0)
            },
            Message::user("m7".into(), "   ", 0.0),
        ];
        assert_eq!(
            lines_typed(&conv),
            ["hello", "Summarize", "/calc 1+1", "Add a note"]
        );
    }
}
