//! Chat rendering: what core adds per 1,000 lines of code on top of the
//! highlighter itself (Markdown to HTML, and the check of the
//! highlighter's answer in `markdown::safe`), natively. Prints figures,
//! asserts nothing. Run: `cargo bench -p hearth-markdown --bench markdown`.

use std::time::{Duration, Instant};

use hearth_markdown::{Enhance, MathState, Plain, SafeHtml, safe, to_chat_html_with};

#[path = "../../core/benches/support/figure.rs"]
mod figure;
use figure::figure;

/// A highlighter's answer for 1,000 lines, shaped like highlight.js's.
fn thousand_lines() -> (String, String) {
    let (mut code, mut html) = (String::new(), String::new());
    for i in 0..1000 {
        code.push_str(&format!("let value_{i} = compute(\"x < {i}\"); // note\n"));
        html.push_str(&format!(
            "<span class=\"hljs-keyword\">let</span> value_{i} = <span class=\"hljs-title function_\">compute</span>(<span class=\"hljs-string\">&quot;x &lt; {i}&quot;</span>); <span class=\"hljs-comment\">// note</span>\n"
        ));
    }
    (code, html)
}

struct Ready(SafeHtml);

impl Enhance for Ready {
    fn code(&self, _: &str, _: &str) -> Option<SafeHtml> {
        Some(self.0.clone())
    }
    fn math(&self, _: &str, _: bool) -> MathState {
        MathState::NotYet
    }
}

fn median(mut runs: Vec<Duration>) -> f64 {
    runs.sort();
    runs[runs.len() / 2].as_secs_f64() * 1000.0
}

fn time(n: usize, mut f: impl FnMut()) -> f64 {
    let runs = (0..n)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    median(runs)
}

fn main() {
    let (code, html) = thousand_lines();
    let md = format!("Here:\n\n```rust\n{code}```\n");
    let checked = safe::highlighted(&code, &html).expect("the sample passes the check");
    println!("chat rendering, 1,000 lines of code (native, median of 31)");
    let check = time(31, || {
        std::hint::black_box(safe::highlighted(&code, &html));
    });
    println!("  check the highlighter's answer        {check:>8.3} ms");
    figure(
        "chat: check a highlighter's answer, 1,000 lines",
        check,
        "ms",
        None,
        "native, median of 31",
    );
    let plain = time(31, || {
        std::hint::black_box(to_chat_html_with(&md, &Plain));
    });
    println!("  render, block plain                    {plain:>8.3} ms");
    figure(
        "chat: render 1,000 lines of code, plain",
        plain,
        "ms",
        None,
        "native, median of 31",
    );
    let ready = Ready(checked);
    let highlighted = time(31, || {
        std::hint::black_box(to_chat_html_with(&md, &ready));
    });
    println!("  render, block highlighted              {highlighted:>8.3} ms");
    figure(
        "chat: render 1,000 lines of code, highlighted",
        highlighted,
        "ms",
        None,
        "native, median of 31",
    );
}
