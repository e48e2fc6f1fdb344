//! Markdown to HTML that is safe to put in the page: raw HTML in the source
//! is shown as text, links keep only http(s) and mailto targets, and images
//! become links (loading a remote image would leak that the note was read).

use pulldown_cmark::{CowStr, Event, LinkType, Options, Parser, Tag, TagEnd, html};

fn safe_url(url: &str) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    lower.starts_with("http://")
        || lower.starts_with("https://")
        || lower.starts_with("mailto:")
        || lower.starts_with('#')
}

/// Renders `source` to HTML with no way for it to run script or load
/// anything by itself.
pub fn to_safe_html(source: &str) -> String {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES;
    let events = Parser::new_ext(source, options).map(|event| match event {
        // Raw HTML, block or inline, is shown as the text it is.
        Event::Html(h) | Event::InlineHtml(h) => Event::Text(h),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => {
            let dest_url = if safe_url(&dest_url) {
                dest_url
            } else {
                CowStr::from("")
            };
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            })
        }
        Event::Start(Tag::Image {
            dest_url,
            title,
            id,
            ..
        }) => {
            let dest_url = if safe_url(&dest_url) {
                dest_url
            } else {
                CowStr::from("")
            };
            Event::Start(Tag::Link {
                link_type: LinkType::Inline,
                dest_url,
                title,
                id,
            })
        }
        Event::End(TagEnd::Image) => Event::End(TagEnd::Link),
        other => other,
    });
    let mut out = String::new();
    html::push_html(&mut out, events);
    // Links open outside the app and tell the target nothing about it.
    out.replace(
        "<a href=\"",
        "<a rel=\"noopener noreferrer nofollow\" target=\"_blank\" href=\"",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_renders() {
        assert_eq!(
            to_safe_html("# Hi\n\n*a* **b** `c`"),
            "<h1>Hi</h1>\n<p><em>a</em> <strong>b</strong> <code>c</code></p>\n"
        );
        assert_eq!(
            to_safe_html("- [x] done"),
            "<ul>\n<li><input disabled=\"\" type=\"checkbox\" checked=\"\"/>\ndone</li>\n</ul>\n"
        );
    }

    #[test]
    fn hostile_input_is_defused() {
        let cases = [
            (
                "<script>alert(1)</script>",
                "&lt;script&gt;alert(1)&lt;/script&gt;",
            ),
            (
                "hi <img src=x onerror=alert(1)>",
                "<p>hi &lt;img src=x onerror=alert(1)&gt;</p>",
            ),
            (
                "[click](javascript:alert(1))",
                "<p><a rel=\"noopener noreferrer nofollow\" target=\"_blank\" href=\"\">click</a></p>",
            ),
            (
                "[x](JaVaScRiPt:alert(1))",
                "<p><a rel=\"noopener noreferrer nofollow\" target=\"_blank\" href=\"\">x</a></p>",
            ),
            (
                "[x](data:text/html,<b>)",
                "<p><a rel=\"noopener noreferrer nofollow\" target=\"_blank\" href=\"\">x</a></p>",
            ),
            (
                "![pixel](https://tracker.example/p.gif)",
                "<p><a rel=\"noopener noreferrer nofollow\" target=\"_blank\" href=\"https://tracker.example/p.gif\">pixel</a></p>",
            ),
            (
                "<a href=\"javascript:x\">y</a>",
                "<p>&lt;a href=\"javascript:x\"&gt;y&lt;/a&gt;</p>",
            ),
            (
                "[ok](https://example.com \"t\")",
                "<p><a rel=\"noopener noreferrer nofollow\" target=\"_blank\" href=\"https://example.com\" title=\"t\">ok</a></p>",
            ),
        ];
        for (md, want) in cases {
            assert_eq!(to_safe_html(md).trim_end(), want, "{md}");
        }
    }
}
