//! Streaming render cost: what one piece of a streamed reply costs to
//! render at the start and at the end of a 20,000-token reply, rendered
//! block by block (`StreamRender`, what the chat does) and, as the
//! anchor, whole on every piece. Natively; prints figures, asserts
//! nothing. Run: `cargo bench -p hearth-markdown --bench streaming`.

use std::time::Instant;

use hearth_markdown::{Plain, StreamRender, to_chat_html_with};

#[path = "../../core/benches/support/figure.rs"]
mod figure;
use figure::figure;

/// About 20,000 tokens (four characters each) of a chat answer: prose,
/// lists and code blocks, as long replies are.
fn reply() -> String {
    let mut out = String::new();
    let mut i = 0;
    while out.len() < 80_000 {
        match i % 4 {
            0 | 2 => out.push_str(&format!(
                "Paragraph {i} explains one more step of the plan, with *emphasis*, `inline code` and a [link](https://example.org/{i}), in two or three sentences that run on for a while.\n\n"
            )),
            1 => out.push_str(&format!("- item {i} one\n- item {i} two\n- item {i} three\n\n")),
            _ => out.push_str(&format!(
                "```rust\nfn step_{i}(x: u32) -> u32 {{\n    x * {i} + 1\n}}\n```\n\n"
            )),
        }
        i += 1;
    }
    out
}

/// Median milliseconds per piece over `pieces`, rendering with `render`
/// each prefix of `text` that ends a piece.
fn per_piece(text: &str, pieces: &[usize], mut render: impl FnMut(&str)) -> f64 {
    let mut times: Vec<f64> = pieces
        .iter()
        .map(|&end| {
            let t = Instant::now();
            render(&text[..end]);
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn main() {
    let text = reply();
    let ends: Vec<usize> = (1..=text.len() / 4).map(|i| i * 4).collect();
    let tokens = ends.len();
    let window = 200;
    let (start, end) = (&ends[..window], &ends[tokens - window..]);

    // Block by block, as the chat renders: the renderer has seen every
    // piece before the measured ones.
    let mut render = StreamRender::new();
    for &e in &ends[..tokens - window] {
        render.update(&text[..e], &Plain);
    }
    let mut fresh = StreamRender::new();
    let blocks_start = per_piece(&text, start, |t| {
        fresh.update(t, &Plain);
    });
    let blocks_end = per_piece(&text, end, |t| {
        render.update(t, &Plain);
    });
    let whole_start = per_piece(&text, start, |t| {
        std::hint::black_box(to_chat_html_with(t, &Plain));
    });
    let whole_end = per_piece(&text, end, |t| {
        std::hint::black_box(to_chat_html_with(t, &Plain));
    });

    println!("streaming render, {tokens} pieces of 4 bytes (native, median of {window} pieces)");
    println!(
        "  block by block: first pieces {blocks_start:>8.4} ms, last pieces {blocks_end:>8.4} ms"
    );
    println!(
        "  whole each time: first pieces {whole_start:>8.4} ms, last pieces {whole_end:>8.4} ms"
    );
    let detail = format!("{tokens}-token reply, median of {window} pieces, native");
    figure(
        "streaming: render one piece, start of reply",
        blocks_start,
        "ms",
        None,
        &detail,
    );
    figure(
        "streaming: render one piece, end of reply",
        blocks_end,
        "ms",
        None,
        &detail,
    );
    figure(
        "streaming: last piece vs first piece (block by block)",
        blocks_end / blocks_start,
        "x",
        Some(1.5),
        &detail,
    );
    figure(
        "streaming: last piece vs first piece (whole each time, before)",
        whole_end / whole_start,
        "x",
        None,
        &detail,
    );
}
