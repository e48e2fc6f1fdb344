//! The provider settings form without a component: what the person typed,
//! the configuration it makes, what picking a preset does, what a stored
//! configuration fills in, and what a connection test's model list means
//! for the form. The provider panel keeps one signal per field, builds a
//! [`ProviderForm`] from them and renders what these functions return.

use crate::assistant::providers::{IN_TAB, ModelInfo, ProviderConfig, ProviderKind, preset};

/// The choice of a custom OpenAI-compatible server.
pub const CUSTOM_OPENAI: &str = "custom-openai";
/// The choice of a custom Anthropic server.
pub const CUSTOM_ANTHROPIC: &str = "custom-anthropic";
/// The preset the form starts with when nothing is stored.
pub const FIRST_CHOICE: &str = "ollama";

/// The form's fields, as typed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProviderForm {
    /// A preset's id, [`CUSTOM_OPENAI`] or [`CUSTOM_ANTHROPIC`].
    pub choice: String,
    pub base_url: String,
    pub api_key: String,
    pub model: String,
    /// "In this tab": the chosen stored model, the longest answer and the
    /// context length.
    pub tab_model: String,
    pub tab_max_tokens: String,
    pub tab_context: String,
    /// Whether the model sees pictures: [`VISION_AUTO`], [`VISION_YES`]
    /// or [`VISION_NO`].
    pub vision: String,
}

/// "Sees pictures": judged by the model's name.
pub const VISION_AUTO: &str = "auto";
/// "Sees pictures": yes, as the person knows it does.
pub const VISION_YES: &str = "yes";
/// "Sees pictures": no.
pub const VISION_NO: &str = "no";

impl ProviderForm {
    /// Fills the form from what is stored; with nothing stored, the first
    /// preset with its URL and no key or model. The "In this tab" fields
    /// change only when the stored provider is in this tab.
    pub fn fill(&mut self, stored: Option<&ProviderConfig>) {
        match stored {
            Some(c) => {
                self.choice = c.preset.clone().unwrap_or_else(|| match c.kind {
                    ProviderKind::OpenAiCompatible => CUSTOM_OPENAI.into(),
                    ProviderKind::Anthropic => CUSTOM_ANTHROPIC.into(),
                    ProviderKind::InTab => IN_TAB.into(),
                });
                if c.in_tab() {
                    self.tab_model = c.model.clone();
                    self.tab_max_tokens = c.max_tokens.map(|n| n.to_string()).unwrap_or_default();
                    self.tab_context = c.context_length.map(|n| n.to_string()).unwrap_or_default();
                }
                self.base_url = c.base_url.clone();
                self.api_key = c.api_key.clone();
                self.model = c.model.clone();
                self.vision = match c.vision {
                    None => VISION_AUTO,
                    Some(true) => VISION_YES,
                    Some(false) => VISION_NO,
                }
                .into();
            }
            None => {
                self.choice = FIRST_CHOICE.into();
                self.base_url = preset(FIRST_CHOICE)
                    .map(|p| p.base_url.to_string())
                    .unwrap_or_default();
                self.api_key = String::new();
                self.model = String::new();
                self.vision = VISION_AUTO.into();
            }
        }
    }

    /// Whether the choice is the model in this tab.
    pub fn in_tab(&self) -> bool {
        self.choice == IN_TAB
    }

    /// Whether the choice needs an API key (custom servers may).
    pub fn needs_key(&self) -> bool {
        preset(&self.choice).is_none_or(|p| p.needs_key)
    }

    /// Picks a preset (or a custom server): a preset brings its own URL, a
    /// custom server starts with none, not the URL of the preset before.
    pub fn choose(&mut self, id: String) {
        self.base_url = preset(&id)
            .map(|p| p.base_url.to_string())
            .unwrap_or_default();
        self.choice = id;
    }

    /// The configuration the form describes, with its text trimmed. In
    /// this tab, a longest answer of 0 and a context under 512 tokens (or
    /// anything that is not a number) mean "let Hearth choose".
    pub fn config(&self) -> ProviderConfig {
        if self.in_tab() {
            let mut c = match preset(IN_TAB) {
                Some(p) => ProviderConfig::from_preset(p, "", self.tab_model.trim()),
                None => ProviderConfig::custom(ProviderKind::InTab, "", self.tab_model.trim()),
            };
            c.max_tokens = self
                .tab_max_tokens
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|n| *n > 0);
            c.context_length = self
                .tab_context
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|n| *n >= 512);
            return c;
        }
        let (kind, preset_id) = match self.choice.as_str() {
            CUSTOM_OPENAI => (ProviderKind::OpenAiCompatible, None),
            CUSTOM_ANTHROPIC => (ProviderKind::Anthropic, None),
            other => (
                preset(other).map_or(ProviderKind::OpenAiCompatible, |p| p.kind),
                Some(other.to_string()),
            ),
        };
        ProviderConfig {
            kind,
            preset: preset_id,
            base_url: self.base_url.trim().to_string(),
            api_key: self.api_key.trim().to_string(),
            model: self.model.trim().to_string(),
            max_tokens: None,
            temperature: None,
            include_usage: true,
            context_length: None,
            vision: match self.vision.as_str() {
                VISION_YES => Some(true),
                VISION_NO => Some(false),
                _ => None,
            },
        }
    }
}

/// What a successful connection test means for the form.
#[derive(Clone, Debug, PartialEq)]
pub struct Connected {
    /// The line the form shows.
    pub text: String,
    /// The model to select: the first listed when none was typed.
    pub pick: Option<String>,
    /// Whether the model must be typed (the server listed none).
    pub type_name: bool,
}

/// Reads the model list a test of `config` returned.
pub fn connected(config: &ProviderConfig, list: &[ModelInfo]) -> Connected {
    let n = list.len();
    let missing = !config.model.is_empty() && n > 0 && !list.iter().any(|m| m.id == config.model);
    let pick = if config.model.is_empty() {
        list.first().map(|m| m.id.clone())
    } else {
        None
    };
    let mut text = format!(
        "Connected to {}: {n} model{} available.",
        config.display_name(),
        if n == 1 { "" } else { "s" }
    );
    if missing {
        text.push_str(&format!(
            " It has no model called '{}'; pick one from the list.",
            config.model
        ));
    }
    Connected {
        text,
        pick,
        type_name: n == 0,
    }
}

/// The model picker's options, `(id, label)`: the listed models, with the
/// typed one first when the list lacks it.
pub fn model_options(listed: &[ModelInfo], typed: &str) -> Vec<(String, String)> {
    let mut list = listed.to_vec();
    if !typed.is_empty() && !list.iter().any(|x| x.id == typed) {
        list.insert(
            0,
            ModelInfo {
                id: typed.to_string(),
                name: None,
                context_length: None,
            },
        );
    }
    list.into_iter()
        .map(|info| {
            let label = match (&info.name, info.context_length) {
                (Some(n), Some(c)) if *n != info.id => format!("{n} ({}, {c} tokens)", info.id),
                (Some(n), None) if *n != info.id => format!("{n} ({})", info.id),
                (_, Some(c)) => format!("{} ({c} tokens)", info.id),
                _ => info.id.clone(),
            };
            (info.id, label)
        })
        .collect()
}

/// The context window of `model` as the listed models give it.
pub fn listed_window(listed: &[ModelInfo], model: &str) -> Option<u64> {
    listed
        .iter()
        .find(|m| m.id == model)
        .and_then(|m| m.context_length)
}

/// The model field's placeholder for `choice`: the name of a model that
/// provider serves, so the example is one that would work there.
pub fn model_placeholder(choice: &str) -> &'static str {
    match choice {
        "openai" => "e.g. gpt-4.1-mini — or Test connection to pick from the list",
        "openrouter" => "e.g. openai/gpt-4.1-mini — or Test connection to pick from the list",
        "anthropic" | CUSTOM_ANTHROPIC => {
            "e.g. claude-sonnet-4-5 — or Test connection to pick from the list"
        }
        "lmstudio" => "e.g. qwen2.5-7b-instruct — or Test connection to pick from the list",
        "llamacpp" => "Test connection to see the model the server loaded",
        _ => "e.g. llama3.2 — or Test connection to pick from the list",
    }
}

/// Reads "Steps per turn" as typed: a whole number from 1 to
/// [`MAX_STEPS_PER_TURN`], or what is wrong in words.
pub fn parse_steps(text: &str) -> Result<u32, String> {
    let wrong = || format!("Steps per turn must be a whole number from 1 to {MAX_STEPS_PER_TURN}.");
    let n: i64 = text.trim().parse().map_err(|_| wrong())?;
    if (1..=i64::from(MAX_STEPS_PER_TURN)).contains(&n) {
        Ok(n as u32)
    } else {
        Err(wrong())
    }
}

/// The most model requests one turn may make before it asks to go on.
pub const MAX_STEPS_PER_TURN: u32 = 100;

/// The host part of a URL, for "Sent only to …".
pub fn host(url: &str) -> String {
    url.split_once("://")
        .map(|(_, r)| r)
        .unwrap_or(url)
        .split(['/', '?', '#'])
        .next()
        .unwrap_or("")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_per_turn_as_typed() {
        let wrong = Err("Steps per turn must be a whole number from 1 to 100.".to_string());
        let cases = [
            ("10", Ok(10)),
            (" 1 ", Ok(1)),
            ("100", Ok(100)),
            ("-5", wrong.clone()),
            ("0", wrong.clone()),
            ("101", wrong.clone()),
            ("2.5", wrong.clone()),
            ("", wrong.clone()),
            ("ten", wrong.clone()),
            ("99999999999999999999", wrong),
        ];
        for (text, want) in cases {
            assert_eq!(parse_steps(text), want, "{text:?}");
        }
    }

    #[test]
    fn each_provider_suggests_a_model_it_serves() {
        assert!(model_placeholder("openai").starts_with("e.g. gpt-"));
        assert!(model_placeholder("anthropic").starts_with("e.g. claude-"));
        assert!(model_placeholder(CUSTOM_ANTHROPIC).starts_with("e.g. claude-"));
        assert!(model_placeholder("openrouter").starts_with("e.g. openai/"));
        assert!(model_placeholder("ollama").starts_with("e.g. llama3.2"));
        assert!(model_placeholder(CUSTOM_OPENAI).starts_with("e.g. llama3.2"));
    }

    fn model(id: &str, name: Option<&str>, context: Option<u64>) -> ModelInfo {
        ModelInfo {
            id: id.into(),
            name: name.map(str::to_string),
            context_length: context,
        }
    }

    #[test]
    fn an_empty_form_fills_with_the_first_preset() {
        let mut form = ProviderForm {
            tab_model: "kept".into(),
            api_key: "old".into(),
            ..ProviderForm::default()
        };
        form.fill(None);
        assert_eq!(form.choice, FIRST_CHOICE);
        assert_eq!(
            form.base_url,
            preset(FIRST_CHOICE).unwrap().base_url.to_string()
        );
        assert_eq!((form.api_key.as_str(), form.model.as_str()), ("", ""));
        // The in-tab fields are left as they were.
        assert_eq!(form.tab_model, "kept");
    }

    #[test]
    fn a_stored_provider_fills_the_form_and_makes_the_same_config() {
        let stored =
            ProviderConfig::custom(ProviderKind::Anthropic, "https://example.test/v1", "claude");
        let mut form = ProviderForm::default();
        form.fill(Some(&stored));
        assert_eq!(form.choice, CUSTOM_ANTHROPIC);
        assert_eq!(form.config(), stored);
        assert_eq!(form.vision, VISION_AUTO);
        // What the person said about pictures is kept both ways.
        for said in [Some(true), Some(false), None] {
            let mut told = stored.clone();
            told.vision = said;
            form.fill(Some(&told));
            assert_eq!(form.config().vision, said);
        }

        let mut in_tab = ProviderConfig::custom(ProviderKind::InTab, "", "model-1");
        in_tab.max_tokens = Some(256);
        in_tab.context_length = Some(4096);
        form.fill(Some(&in_tab));
        assert_eq!(form.choice, IN_TAB);
        assert_eq!(
            (
                form.tab_model.as_str(),
                form.tab_max_tokens.as_str(),
                form.tab_context.as_str()
            ),
            ("model-1", "256", "4096")
        );
    }

    #[test]
    fn the_config_is_trimmed_and_in_tab_limits_are_checked() {
        let form = ProviderForm {
            choice: CUSTOM_OPENAI.into(),
            base_url: "  http://localhost:8000/v1 ".into(),
            api_key: " key ".into(),
            model: " m ".into(),
            ..ProviderForm::default()
        };
        let c = form.config();
        assert_eq!(
            (
                c.kind,
                c.preset,
                c.base_url.as_str(),
                c.api_key.as_str(),
                c.model.as_str()
            ),
            (
                ProviderKind::OpenAiCompatible,
                None,
                "http://localhost:8000/v1",
                "key",
                "m"
            )
        );

        let cases = [
            ("0", "511", None, None),
            ("100", "512", Some(100), Some(512)),
            ("lots", "-1", None, None),
            (" 64 ", " 8192 ", Some(64), Some(8192)),
        ];
        for (max, context, want_max, want_context) in cases {
            let form = ProviderForm {
                choice: IN_TAB.into(),
                tab_model: " tiny ".into(),
                tab_max_tokens: max.into(),
                tab_context: context.into(),
                ..ProviderForm::default()
            };
            let c = form.config();
            assert_eq!(
                (c.model.as_str(), c.max_tokens, c.context_length),
                ("tiny", want_max, want_context),
                "{max} {context}"
            );
            assert!(c.in_tab());
        }
    }

    #[test]
    fn a_preset_brings_its_url_and_a_custom_server_none() {
        let mut form = ProviderForm::default();
        form.fill(None);
        form.choose(CUSTOM_OPENAI.into());
        assert_eq!(
            (form.choice.as_str(), form.base_url.as_str()),
            (CUSTOM_OPENAI, "")
        );
        assert!(form.needs_key());
        form.choose(FIRST_CHOICE.into());
        assert_eq!(
            form.base_url,
            preset(FIRST_CHOICE).unwrap().base_url.to_string()
        );
        assert_eq!(form.needs_key(), preset(FIRST_CHOICE).unwrap().needs_key);
    }

    #[test]
    fn a_test_picks_the_first_model_or_says_the_typed_one_is_missing() {
        let list = [model("a", None, None), model("b", None, None)];
        let empty = ProviderConfig::custom(ProviderKind::OpenAiCompatible, "http://x", "");
        let got = connected(&empty, &list);
        assert_eq!(got.pick.as_deref(), Some("a"));
        assert!(!got.type_name);
        assert!(got.text.ends_with(": 2 models available."), "{}", got.text);

        let typed = ProviderConfig::custom(ProviderKind::OpenAiCompatible, "http://x", "c");
        let got = connected(&typed, &list[..1]);
        assert_eq!(got.pick, None);
        assert!(
            got.text.ends_with(
                ": 1 model available. It has no model called 'c'; pick one from the list."
            ),
            "{}",
            got.text
        );

        let got = connected(&typed, &[]);
        assert!(got.type_name);
        assert!(got.text.ends_with(": 0 models available."), "{}", got.text);
    }

    #[test]
    fn model_options_put_a_typed_model_first_and_say_what_each_is() {
        let list = [
            model("a", Some("Alpha"), Some(8192)),
            model("b", Some("Beta"), None),
            model("c", Some("c"), Some(4096)),
            model("d", None, None),
        ];
        assert_eq!(
            model_options(&list, "typed"),
            vec![
                ("typed".to_string(), "typed".to_string()),
                ("a".to_string(), "Alpha (a, 8192 tokens)".to_string()),
                ("b".to_string(), "Beta (b)".to_string()),
                ("c".to_string(), "c (4096 tokens)".to_string()),
                ("d".to_string(), "d".to_string()),
            ]
        );
        assert_eq!(model_options(&list, "a").len(), 4);
        assert_eq!(listed_window(&list, "a"), Some(8192));
        assert_eq!(listed_window(&list, "d"), None);
    }

    #[test]
    fn host_is_the_part_between_the_scheme_and_the_path() {
        for (url, want) in [
            ("http://localhost:8000/v1", "localhost:8000"),
            ("https://api.example.com?x=1", "api.example.com"),
            ("example.com/v1#frag", "example.com"),
            ("", ""),
        ] {
            assert_eq!(host(url), want, "{url}");
        }
    }
}
