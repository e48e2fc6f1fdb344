//! Fitting a request into the model's context window, the same way for
//! every provider whose window Hearth knows: the system prompt, the tools
//! and the latest exchange always go; the oldest exchanges are left out,
//! whole, until the estimate fits, and the reply records how many were
//! left out so the chat can say so.
//!
//! An exchange is a user message with everything that answered it (the
//! assistant's text, its tool calls and their results), so a tool result
//! is never sent without the call it answers.

use serde::{Deserialize, Serialize};

use crate::assistant::providers::{ChatRequest, ModelLimits, WireMessage};
use crate::assistant::tokens::estimate_request;

/// Earlier messages left out of a request so it fits, recorded on the
/// reply it produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextNote {
    /// Messages of the conversation not sent (user and assistant messages
    /// and tool results alike).
    pub left_out: usize,
    /// The window the request was fitted into.
    pub window: u64,
    /// Even the latest exchange alone is over the budget.
    #[serde(default)]
    pub still_too_long: bool,
}

impl ContextNote {
    /// The sentence the chat shows.
    pub fn describe(&self) -> String {
        let messages = if self.left_out == 1 {
            "1 earlier message was".to_string()
        } else {
            format!("{} earlier messages were", self.left_out)
        };
        let mut s = format!(
            "{messages} left out so this fits the model's {} token context.",
            crate::assistant::providers::in_tab::group(self.window)
        );
        if self.still_too_long {
            s.push_str(" Even the latest message may not fit.");
        }
        s
    }
}

/// The tokens a request may use: the window less the reply's room and a
/// margin for the estimate's error (an eighth: the estimate follows one
/// family of vocabularies and a small model's may cut text finer).
pub fn budget(window: u64, max_output: Option<u64>) -> u64 {
    let reply = max_output.unwrap_or(window / 4).min(window / 2);
    window.saturating_sub(reply).saturating_sub(window / 8)
}

/// Leaves out the oldest whole exchanges of `request` until its estimate
/// fits `window` (less the reply's room), never the latest exchange.
/// Returns what was left out, or `None` when everything fits.
pub fn fit(request: &mut ChatRequest, limits: &ModelLimits) -> Option<ContextNote> {
    let window = limits.context_window?;
    let budget = budget(window, limits.max_output) as usize;
    if estimate_request(request).total() <= budget {
        return None;
    }
    // Where each exchange starts: every user message, and the start.
    let starts: Vec<usize> = request
        .messages
        .iter()
        .enumerate()
        .filter(|(i, m)| *i == 0 || matches!(m, WireMessage::User { .. }))
        .map(|(i, _)| i)
        .collect();
    let last = starts.last().copied().unwrap_or(0);
    let mut left_out = 0;
    for &start in starts.iter().skip(1) {
        // Drop everything before `start`.
        let dropped = start - left_out;
        request.messages.drain(..dropped);
        left_out = start;
        if estimate_request(request).total() <= budget || start == last {
            break;
        }
    }
    if left_out == 0 && starts.len() <= 1 {
        return Some(ContextNote {
            left_out: 0,
            window,
            still_too_long: true,
        });
    }
    Some(ContextNote {
        left_out,
        window,
        still_too_long: estimate_request(request).total() > budget,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assistant::providers::{ToolSpec, WireToolCall, WireToolResult};
    use serde_json::json;

    fn words(n: usize) -> String {
        vec!["word"; n].join(" ")
    }

    fn exchange(n: usize, with_tool: bool) -> Vec<WireMessage> {
        let mut out = vec![WireMessage::user(format!("question {n}: {}", words(100)))];
        if with_tool {
            out.push(WireMessage::Assistant {
                text: String::new(),
                tool_calls: vec![WireToolCall {
                    id: format!("c{n}"),
                    name: "calculator".into(),
                    arguments: json!({"expression": "1+1"}),
                }],
            });
            out.push(WireMessage::ToolResults {
                results: vec![WireToolResult {
                    call_id: format!("c{n}"),
                    name: "calculator".into(),
                    content: "2".into(),
                    is_error: false,
                    images: Vec::new(),
                }],
            });
        }
        out.push(WireMessage::Assistant {
            text: format!("answer {n}: {}", words(100)),
            tool_calls: Vec::new(),
        });
        out
    }

    fn request(exchanges: usize) -> ChatRequest {
        let mut messages: Vec<WireMessage> = (0..exchanges)
            .flat_map(|n| exchange(n, n % 2 == 1))
            .collect();
        messages.push(WireMessage::user("the latest question"));
        ChatRequest {
            system: "You are Hearth.".into(),
            messages,
            tools: vec![ToolSpec {
                name: "discover_skills".into(),
                description: "Find skills".into(),
                input_schema: json!({"type": "object"}),
            }],
        }
    }

    fn limits(window: u64) -> ModelLimits {
        ModelLimits {
            context_window: Some(window),
            max_output: Some(256),
            tools: true,
        }
    }

    #[test]
    fn nothing_is_left_out_when_it_fits_or_the_window_is_unknown() {
        let mut r = request(3);
        let before = r.clone();
        assert_eq!(fit(&mut r, &limits(100_000)), None);
        assert_eq!(fit(&mut r, &ModelLimits::default()), None);
        assert_eq!(r, before);
    }

    #[test]
    fn the_oldest_whole_exchanges_go_first() {
        let mut r = request(10);
        let full = r.messages.len();
        let note = fit(&mut r, &limits(1500)).unwrap();
        assert!(!note.still_too_long);
        assert_eq!(note.left_out + r.messages.len(), full);
        assert!(estimate_request(&r).total() <= budget(1500, Some(256)) as usize);
        // What remains starts at a user message and ends with the latest.
        assert!(matches!(r.messages[0], WireMessage::User { .. }));
        assert_eq!(
            r.messages.last(),
            Some(&WireMessage::user("the latest question"))
        );
        // Every tool result still follows the call it answers.
        for (i, m) in r.messages.iter().enumerate() {
            if let WireMessage::ToolResults { results } = m {
                let WireMessage::Assistant { tool_calls, .. } = &r.messages[i - 1] else {
                    panic!("a tool result without its call at {i}");
                };
                assert_eq!(tool_calls[0].id, results[0].call_id);
            }
        }
        // The system prompt and tools always go.
        assert_eq!(r.system, "You are Hearth.");
        assert_eq!(r.tools.len(), 1);
    }

    #[test]
    fn the_latest_exchange_is_kept_even_when_too_long() {
        let mut r = request(2);
        r.messages.push(WireMessage::Assistant {
            text: words(3000),
            tool_calls: Vec::new(),
        });
        let note = fit(&mut r, &limits(1024)).unwrap();
        assert!(note.still_too_long);
        assert_eq!(r.messages[0], WireMessage::user("the latest question"));
        let mut alone = ChatRequest {
            system: String::new(),
            messages: vec![WireMessage::user(words(5000))],
            tools: Vec::new(),
        };
        let note = fit(&mut alone, &limits(1024)).unwrap();
        assert_eq!((note.left_out, note.still_too_long), (0, true));
        assert_eq!(alone.messages.len(), 1);
    }

    #[test]
    fn the_note_reads_plainly() {
        let note = ContextNote {
            left_out: 6,
            window: 4096,
            still_too_long: false,
        };
        assert_eq!(
            note.describe(),
            "6 earlier messages were left out so this fits the model's 4,096 token context."
        );
        let one = ContextNote {
            left_out: 1,
            window: 512,
            still_too_long: true,
        };
        assert_eq!(
            one.describe(),
            "1 earlier message was left out so this fits the model's 512 token context. Even the latest message may not fit."
        );
    }

    #[test]
    fn the_budget_keeps_room_for_the_reply() {
        assert_eq!(budget(4096, Some(1024)), 4096 - 1024 - 512);
        assert_eq!(budget(4096, None), 4096 - 1024 - 512);
        // A reply asked longer than half the window gets half.
        assert_eq!(budget(1000, Some(5000)), 1000 - 500 - 125);
    }
}
