//! HTML to readable Markdown, for `web_fetch`: the page's title, its article
//! as Markdown (headings, paragraphs, lists, links, code, quotes, tables)
//! and the article's links.
//!
//! Three maintained libraries do the work: html5ever (through `dom_query`)
//! parses the page exactly as the HTML5 standard says (every named entity,
//! implied end tags, misnested markup); `dom_smoothie`, a port of Mozilla's
//! Readability, picks the article out of the navigation, sidebars and
//! footers; `htmd` writes the article as Markdown. A page that marks its
//! one main region (`<main>`, `role=main`) has already said where its
//! content is: that region is read without its asides and footers, and
//! Readability's scoring, most of a read's time, is skipped. Around the
//! libraries this module does what a reader for a model needs and they
//! leave open: it bounds the tree's depth (both libraries recurse), drops
//! what a person would not see (hidden elements, form controls), keeps only
//! links a person could follow (http, https, mailto; never `javascript:`),
//! shows images as their description, and lists the article's links.

use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;

use dom_query::{Document, NodeRef};
use dom_smoothie::{CandidateSelectMode, Config, Readability};
use hearth_core::api::web::Link;
use htmd::element_handler::{HandlerResult, Handlers};
use htmd::options::{BrStyle, BulletListMarker, HrStyle, Options};
use htmd::{Element, HtmlToMarkdown};
use markup5ever::tendril::StrTendril;
use markup5ever::{Attribute, LocalName, QualName, ns};
use markup5ever_rcdom::{Handle, Node, NodeData};
use url::Url;

/// What a page converts to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Converted {
    pub title: Option<String>,
    pub markdown: String,
    pub links: Vec<Link>,
}

/// The most links listed beside the Markdown.
pub const MAX_LINKS: usize = 300;
/// Elements nested deeper than this are replaced by their text, so no page
/// can exhaust the stack of the libraries' recursive walks.
const MAX_DEPTH: usize = 200;

/// Elements never read: they hold no text a person sees on the page.
const INVISIBLE: [&str; 21] = [
    "script", "style", "noscript", "template", "svg", "math", "canvas", "iframe", "object",
    "embed", "audio", "video", "map", "input", "select", "button", "textarea", "option",
    "datalist", "meter", "progress",
];

/// What [`prune`] drops besides what a person cannot see.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Prune {
    /// A whole page before Readability looks for its article: navigation
    /// goes too. Readability drops `role=navigation` itself, and `<nav>`
    /// says the same.
    Page,
    /// A fragment of text (a search snippet): only what is not seen.
    Fragment,
}

/// Page chrome, dropped when no article could be picked out.
const CHROME: &str = "nav, header, footer, aside, form, [role=navigation], [role=banner], \
    [role=contentinfo], [role=search]";

/// Converts `html`, fetched from `url`, to Markdown.
///
/// The page is parsed once. Its marked main region, or else the article
/// Readability picks in that tree, is copied from it straight into htmd's
/// tree, where its links are made safe and htmd writes it: it is never
/// serialized and parsed again.
pub fn to_markdown(html: &str, url: &Url) -> Converted {
    let doc = Document::from(html);
    let head = prune(&doc, Prune::Page);
    let base = base_of(&head, url);
    let page_title = head_title(&head);
    // A page that marks its one main region has said where its content
    // is: that region is read as it stands, and Readability (which would
    // score every paragraph of the page to find it) is not asked.
    let main = head
        .main
        .filter(|main| head.mains == 1 && is_substantial(main))
        .map(|main| to_htmd_tree(&[main], &ASIDES));
    drop(head);
    let (title, tree) = match main {
        Some(tree) => (page_title, Some(tree)),
        None => readability_article(doc, html, &base, page_title),
    };
    let converter = converter();
    let tree = match tree {
        Some(tree) => tree,
        None => match converter.html_to_tree(&whole_page(html)) {
            Ok(tree) => tree,
            // html5ever reads any string; htmd's signature only allows failing.
            Err(_) => {
                return Converted {
                    title,
                    markdown: String::new(),
                    links: Vec::new(),
                };
            }
        },
    };
    let links = tidy_links(&tree, &base);
    let markdown = tidy(&converter.tree_to_markdown(&tree));
    Converted {
        title,
        markdown,
        links,
    }
}

/// The article Readability picks out of `doc`, copied into htmd's tree,
/// and the title to show with it; no tree when it finds none.
fn readability_article(
    doc: Document,
    html: &str,
    base: &Url,
    page_title: Option<String>,
) -> (Option<String>, Option<Handle>) {
    let readability =
        Readability::with_document(doc, Some(base.as_str()), Some(readability_config()));
    let mut readability = readability.ok();
    let article = readability.as_mut().and_then(|r| r.parse().ok());
    match (article, &readability) {
        (Some(article), Some(r)) if has_words(&article.text_content) => {
            // The page's own title, as the browser's tab shows it;
            // Readability's guess (which may cut a "Site: Headline" title
            // at the colon) only when the page has none.
            let title = page_title
                .or_else(|| Some(article.title.trim().to_string()).filter(|t| !t.is_empty()));
            // Readability leaves the article in its document under this id.
            let root = r.doc.select_single("#readability-page-1");
            let tree = root.nodes().first().map(|root| {
                let parts = table_in_context(&r.doc, root, html);
                to_htmd_tree(&parts.unwrap_or_else(|| vec![*root]), &[])
            });
            (title, tree)
        }
        _ => (page_title, None),
    }
}

/// What a main region holds beside its content, left out when it is read:
/// asides (notes, pull quotes, related links) and footers (bylines, tags,
/// sharing), as Readability leaves them out of an article.
const ASIDES: [&str; 2] = ["aside", "footer"];

/// Attributes htmd reads (a link's target, an image's description, a code
/// block's language, an ordered list's first number); no other is copied.
const KEPT_ATTRIBUTES: [&str; 4] = ["href", "alt", "class", "start"];

/// A main region with less text than this (letters and digits) is taken
/// for a placeholder, and the page is read as if it had none.
const MIN_MAIN_CHARS: usize = 140;

fn is_substantial(main: &NodeRef<'_>) -> bool {
    main.text()
        .chars()
        .filter(|c| c.is_alphanumeric())
        .take(MIN_MAIN_CHARS)
        .count()
        >= MIN_MAIN_CHARS
}

/// What a table is made of below the table itself.
const TABLE_PARTS: [&str; 6] = ["caption", "colgroup", "thead", "tbody", "tfoot", "tr"];

/// Readability counts no block of fewer characters than this when it
/// scores a page: less text than this adds nothing to a parent's score.
const MIN_BLOCK_CHARS: usize = 25;

/// The part of the page a table sits in, when the article Readability
/// picked is that one table and the part holds more (headings, notes,
/// other tables): the part in page order, the table back in its place,
/// with the paragraphs beside it that Readability joins to an article.
/// `None` for any other article, which stands as picked.
///
/// Readability climbs from its best-scoring element through each parent
/// that scores at least a third of that best, and settles on a parent that
/// scores more than the one below it. When the best is a table's body, the
/// table scores exactly a third of it (the same cells, one level further
/// away), so whether the climb goes on past the table is decided by
/// rounding: one page of link tables gives the section or its first table
/// alone depending on how many rows the table has, in JS's doubles as in
/// dom_smoothie's `f32`, at different counts. This settles it one way, so
/// that a page reads the same whatever its length: the section, when it
/// holds a block of text beside the table that Readability would count
/// (at least [`MIN_BLOCK_CHARS`] characters), since its headings say what
/// the table is and its other tables belong with it. Exact arithmetic
/// would go on past the table and then settle on the section only if the
/// section outscores the table; it gets two thirds of the table's score
/// from the table itself, so beside a long table and little else it does
/// not, and there this reads more than Readability does. The rest is what
/// Readability does with the element it settles on: a parent whose only
/// child it is stands for it, and the paragraphs beside it that read as
/// prose are joined. Siblings Readability would join by their score
/// (which it does not tell) are left out, and the section is not cleaned
/// as Readability cleans its article.
fn table_in_context<'a>(
    doc: &'a Document,
    article: &NodeRef<'a>,
    html: &str,
) -> Option<Vec<NodeRef<'a>>> {
    // Readability renames what it takes to a `<div>`; a table or a table's
    // body is known by what it holds.
    let [taken] = article.element_children()[..] else {
        return None;
    };
    let parts = taken.element_children();
    let is_table_part = |n: &NodeRef<'_>| {
        n.node_name()
            .is_some_and(|name| TABLE_PARTS.contains(&&*name))
    };
    if parts.is_empty() || !parts.iter().all(is_table_part) {
        return None;
    }
    // Where Readability took it from: it leaves the article there.
    let from = article.parent()?;
    // The page as parsed, before Readability moved anything. A node's id is
    // its index in the tree, which no change renumbers, so an id names the
    // same element in both trees; the name and the parent are checked all
    // the same.
    let page = Document::from(html);
    let original = page.tree.get(&taken.id)?;
    if original.parent().map(|p| p.id) != Some(from.id) {
        return None;
    }
    // The child of `region` that holds the table, and `region`, the part of
    // the page the table sits in.
    let (holder, region) = match original.node_name().as_deref() {
        Some("table") => (*article, from),
        Some("thead" | "tbody" | "tfoot") if from.has_name("table") => (from, from.parent()?),
        _ => return None,
    };
    if !region.is_element() || region.has_name("body") || region.has_name("html") {
        return None;
    }
    let holds_more = region
        .children_it(false)
        .any(|c| c.id != holder.id && char_count(&c.text()) >= MIN_BLOCK_CHARS);
    if !holds_more {
        return None;
    }
    // The table goes back where it was, as what it was (Readability made it
    // a `<div>`, which inside a table would lose its rows): after the
    // nearest of its earlier siblings still in `from` (or what now holds
    // that sibling, such as a paragraph Readability wrapped loose text
    // in), else first.
    taken.rename(&original.node_name()?);
    let before =
        std::iter::successors(original.prev_sibling(), |n| n.prev_sibling()).find_map(|prev| {
            let now = doc.tree.get(&prev.id)?;
            std::iter::successors(Some(now), |n| n.parent())
                .find(|n| n.parent().is_some_and(|p| p.id == from.id))
                .filter(|n| n.id != article.id)
        });
    match before {
        Some(before) => before.insert_after(&taken),
        None => from.prepend_child(&taken),
    }
    article.remove_from_parent();
    // A part that is its parent's only child says no more than the parent.
    let mut region = region;
    while let Some(parent) = region
        .parent()
        .filter(|p| p.is_element() && !p.has_name("body") && !p.has_name("html"))
    {
        if parent.element_children().len() != 1 {
            break;
        }
        region = parent;
    }
    let parts: Vec<_> = match region.parent() {
        Some(parent) => parent
            .element_children()
            .into_iter()
            .filter(|s| s.id == region.id || (s.has_name("p") && reads_as_prose(s)))
            .collect(),
        None => vec![region],
    };
    // As in the rest of Readability's article, the page's title is its
    // only first-level heading.
    for part in &parts {
        let h1s: Vec<_> = part.descendants_it().filter(|n| n.has_name("h1")).collect();
        for h1 in h1s {
            h1.rename("h2");
        }
    }
    Some(parts)
}

/// A paragraph Readability joins to the article beside it: a long one with
/// few links, or a short sentence with none.
fn reads_as_prose(p: &NodeRef<'_>) -> bool {
    let text = collapse_whitespace(&p.text());
    let length = text.chars().count();
    let mut linked = 0;
    let mut stack: Vec<_> = p.children_it(false).collect();
    while let Some(node) = stack.pop() {
        if node.has_name("a") {
            linked += char_count(&node.text());
        } else {
            stack.extend(node.children_it(false));
        }
    }
    // Readability's link density: the share of the text inside links.
    let density = if length == 0 {
        0.0
    } else {
        linked as f64 / length as f64
    };
    let sentence = text.ends_with('.') || text.contains(". ");
    (length > 80 && density < 0.25) || (length > 0 && length < 80 && linked == 0 && sentence)
}

/// Characters of `text` with its whitespace collapsed, as Readability
/// measures text.
fn char_count(text: &str) -> usize {
    collapse_whitespace(text).chars().count()
}

/// How Readability is asked to pick the article.
fn readability_config() -> Config {
    Config {
        // The `language-…` classes of code blocks name their language.
        keep_classes: true,
        // Only the article's title is used, never the page's metadata.
        disable_json_ld: true,
        // Where an article is split into sibling sections (DocBook
        // chapters), Readability.js's own choice keeps one of them;
        // dom_smoothie's keeps their common parent, and scores the same
        // elsewhere on the comparison corpus.
        candidate_select_mode: CandidateSelectMode::DomSmoothie,
        ..Config::default()
    }
}

/// A copy of `roots` (in order) and what is under them as a document in
/// htmd's tree (`<html><body>` around them, as the HTML parser would
/// give), without the elements named in `skip`. Only what htmd reads is
/// copied: elements with the attributes it reads, and text, with
/// neighbouring text joined into one node; comments are left out.
/// The tree is copied as Readability left it; markup the HTML parser would
/// rebuild if the article were serialized and parsed again (table cells
/// in a table Readability renamed to a `<div>`) stays as it is.
fn to_htmd_tree(roots: &[NodeRef<'_>], skip: &[&str]) -> Handle {
    let element = |name: &str| {
        Node::new(NodeData::Element {
            name: QualName::new(None, ns!(html), LocalName::from(name)),
            attrs: RefCell::new(Vec::new()),
            template_contents: RefCell::new(None),
            mathml_annotation_xml_integration_point: false,
        })
    };
    let document = Node::new(NodeData::Document);
    let html = element("html");
    let body = element("body");
    append(&document, html.clone());
    append(&html, element("head"));
    append(&html, body.clone());
    // An explicit stack: the tree is bounded in depth, but no walk here
    // recurses either.
    let mut stack: Vec<_> = roots.iter().rev().map(|r| (*r, body.clone())).collect();
    while let Some((node, parent)) = stack.pop() {
        if node.is_text() {
            let text = node.text();
            let last = parent.children.borrow().last().cloned();
            match last.as_ref().map(|l| &l.data) {
                Some(NodeData::Text { contents }) => contents.borrow_mut().push_tendril(&text),
                _ => append(
                    &parent,
                    Node::new(NodeData::Text {
                        contents: RefCell::new(text),
                    }),
                ),
            }
            continue;
        }
        let Some(el) = node.element_ref() else {
            continue;
        };
        if skip.contains(&&*el.name.local) {
            continue;
        }
        let copy = Node::new(NodeData::Element {
            name: QualName::new(None, ns!(html), LocalName::from(&*el.name.local)),
            attrs: RefCell::new(
                el.attrs
                    .iter()
                    .filter(|a| KEPT_ATTRIBUTES.contains(&&*a.name.local))
                    .map(|a| Attribute {
                        name: QualName::new(None, ns!(), LocalName::from(&*a.name.local)),
                        value: StrTendril::from(&*a.value),
                    })
                    .collect(),
            ),
            template_contents: RefCell::new(None),
            mathml_annotation_xml_integration_point: false,
        });
        drop(el);
        append(&parent, copy.clone());
        // Pushed last to first, so they are copied in order.
        for child in node.children_it(true) {
            stack.push((child, copy.clone()));
        }
    }
    document
}

fn append(parent: &Handle, child: Handle) {
    child.parent.set(Some(Rc::downgrade(parent)));
    parent.children.borrow_mut().push(child);
}

/// The text of an HTML fragment (a search snippet with `<strong>` in it):
/// tags dropped, entities decoded, whitespace collapsed.
pub fn text_from_fragment(html: &str) -> String {
    let doc = Document::fragment(html);
    prune(&doc, Prune::Fragment);
    let mut out = String::new();
    let mut stack = vec![doc.root()];
    while let Some(node) = stack.pop() {
        if node.is_text() {
            out.push_str(&node.text());
            continue;
        }
        if node.is_element() && !is_inline(&node) {
            out.push(' ');
        }
        stack.extend(node.children_it(true));
    }
    collapse_whitespace(&out)
}

fn converter() -> HtmlToMarkdown {
    HtmlToMarkdown::builder()
        .options(Options {
            bullet_list_marker: BulletListMarker::Dash,
            ul_bullet_spacing: 1,
            ol_number_spacing: 1,
            hr_style: HrStyle::Dashes,
            br_style: BrStyle::Backslash,
            ..Options::default()
        })
        .skip_tags(vec!["head", "script", "style", "noscript", "template"])
        .add_handler(vec!["img"], describe_image)
        .build()
}

/// An image becomes `[image: its description]`; one without a description
/// is dropped, since the model cannot see it.
fn describe_image(_: &dyn Handlers, img: Element) -> Option<HandlerResult> {
    let alt = img
        .attrs
        .iter()
        .find(|a| &*a.name.local == "alt")
        .map(|a| collapse_whitespace(&a.value))
        .filter(|a| !a.is_empty())?;
    Some(format!("[image: {alt}]").into())
}

/// The page without its invisible parts and chrome, for pages where
/// Readability found no article (a short page, a list of links).
fn whole_page(html: &str) -> String {
    let doc = Document::from(html);
    prune(&doc, Prune::Page);
    doc.select(CHROME).remove();
    doc.body()
        .map(|b| b.inner_html())
        .unwrap_or_else(|| doc.html())
        .to_string()
}

fn has_words(text: &str) -> bool {
    text.chars().any(char::is_alphanumeric)
}

/// What [`prune`] noted in passing, in page order: the first of each.
#[derive(Default)]
struct Head<'a> {
    base_href: Option<String>,
    title: Option<String>,
    og_title: Option<String>,
    /// The first main region (`<main>` or `role=main`) not inside another.
    main: Option<NodeRef<'a>>,
    /// How many main regions there are, not counting those inside another.
    mains: usize,
}

/// One walk over the tree that drops what a person would not see or
/// could not read as text (scripts, styles, embedded media, form controls,
/// closed dialogs, elements hidden by attribute or inline style) and, for a
/// page, its navigation; replaces each element at `MAX_DEPTH` by its text,
/// so the tree below is at most that deep (both libraries recurse); and
/// notes the page's `<base href>` and titles on the way, so no other walk
/// has to look for them. An explicit stack: no recursion here either.
fn prune(doc: &Document, what: Prune) -> Head<'_> {
    let mut head = Head::default();
    let mut dropped = Vec::new();
    let mut too_deep = Vec::new();
    let mut stack = vec![(doc.root(), 0usize, false)];
    while let Some((node, depth, in_main)) = stack.pop() {
        // Last to first onto the stack, so the page is walked in order.
        for child in node.children_it(true) {
            let Some(el) = child.element_ref() else {
                continue;
            };
            let name = &*el.name.local;
            let attr = |n: &str| {
                el.attrs
                    .iter()
                    .find(|a| &*a.name.local == n)
                    .map(|a| &*a.value)
            };
            let hidden = INVISIBLE.contains(&name)
                || (name == "dialog" && attr("open").is_none())
                || attr("hidden").is_some()
                || attr("aria-hidden") == Some("true")
                || attr("style").is_some_and(hides)
                || (what == Prune::Page && (name == "nav" || attr("role") == Some("navigation")));
            if hidden {
                drop(el);
                dropped.push(child);
                continue;
            }
            match name {
                "base" if head.base_href.is_none() => {
                    head.base_href = attr("href").map(str::to_string);
                }
                "meta" if head.og_title.is_none() && attr("property") == Some("og:title") => {
                    head.og_title = attr("content").map(collapse_whitespace);
                }
                _ => {}
            }
            let is_title = name == "title";
            let is_main = name == "main" || attr("role") == Some("main");
            drop(el);
            if is_title && head.title.is_none() {
                head.title = Some(collapse_whitespace(&child.text()));
            }
            if is_main && !in_main {
                head.mains += 1;
                head.main.get_or_insert(child);
            }
            if depth + 1 >= MAX_DEPTH {
                too_deep.push(child);
            } else {
                stack.push((child, depth + 1, in_main || is_main));
            }
        }
    }
    for node in dropped {
        node.remove_from_parent();
    }
    for node in too_deep {
        let text = node.text();
        node.set_text(text);
    }
    head
}

/// An inline style that hides its element.
fn hides(style: &str) -> bool {
    let style: String = style
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    style.contains("display:none") || style.contains("visibility:hidden")
}

/// The URL relative links resolve against: `<base href>` when the page
/// sets one, else the page's own.
fn base_of(head: &Head, url: &Url) -> Url {
    head.base_href
        .as_deref()
        .and_then(|href| url.join(href.trim()).ok())
        .filter(|b| matches!(b.scheme(), "http" | "https" | "file"))
        .unwrap_or_else(|| url.clone())
}

/// `<title>`, else `og:title`.
fn head_title(head: &Head) -> Option<String> {
    [&head.title, &head.og_title]
        .into_iter()
        .flatten()
        .find(|t| !t.is_empty())
        .cloned()
}

/// Makes every link in htmd's tree absolute or plain text: only http(s)
/// and mailto links keep their `href` (and nothing else, so htmd writes
/// them as Markdown links), and a link to a place on the same page keeps
/// only its text. Returns the http(s) links in page order, each URL once,
/// at most [`MAX_LINKS`].
fn tidy_links(tree: &Handle, base: &Url) -> Vec<Link> {
    let mut links = Vec::new();
    let mut seen = HashSet::new();
    let mut stack = vec![tree.clone()];
    while let Some(node) = stack.pop() {
        stack.extend(node.children.borrow().iter().rev().cloned());
        let NodeData::Element { name, attrs, .. } = &node.data else {
            continue;
        };
        if &*name.local != "a" {
            continue;
        }
        let mut attrs = attrs.borrow_mut();
        let target = attrs
            .iter()
            .find(|a| &*a.name.local == "href")
            .and_then(|href| base.join(href.value.trim()).ok())
            .filter(|t| matches!(t.scheme(), "http" | "https" | "mailto"))
            .filter(|t| !same_page(t, base));
        attrs.retain(|a| &*a.name.local == "href");
        let Some(target) = target else {
            // Without an href htmd writes only the link's text.
            attrs.clear();
            continue;
        };
        if let Some(href) = attrs.first_mut() {
            href.value = target.as_str().into();
        }
        if target.scheme() == "mailto" || links.len() >= MAX_LINKS {
            continue;
        }
        if seen.insert(target.to_string()) {
            let text = collapse_whitespace(&text_of(&node));
            links.push(Link {
                text: if text.is_empty() {
                    target.to_string()
                } else {
                    text
                },
                url: target.to_string(),
            });
        }
    }
    links
}

/// The text under `node` in htmd's tree, in order.
fn text_of(node: &Handle) -> String {
    let mut out = String::new();
    let mut stack = vec![node.clone()];
    while let Some(node) = stack.pop() {
        if let NodeData::Text { contents } = &node.data {
            out.push_str(&contents.borrow());
        }
        stack.extend(node.children.borrow().iter().rev().cloned());
    }
    out
}

/// `url` points into the page at `base` (`#top`, or the page itself).
fn same_page(url: &Url, base: &Url) -> bool {
    url.fragment().is_some() && {
        let (mut a, mut b) = (url.clone(), base.clone());
        a.set_fragment(None);
        b.set_fragment(None);
        a == b
    }
}

/// Elements that do not break a line of text.
fn is_inline(node: &NodeRef<'_>) -> bool {
    matches!(
        node.node_name().as_deref(),
        Some(
            "a" | "abbr"
                | "b"
                | "bdi"
                | "bdo"
                | "cite"
                | "code"
                | "data"
                | "dfn"
                | "em"
                | "i"
                | "kbd"
                | "mark"
                | "q"
                | "s"
                | "samp"
                | "small"
                | "span"
                | "strong"
                | "sub"
                | "sup"
                | "time"
                | "u"
                | "var"
        )
    )
}

fn collapse_whitespace(s: &str) -> String {
    s.split(|c: char| c.is_whitespace())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Trailing spaces go, no more than one blank line in a row, no blank
/// lines at either end.
fn tidy(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut blank = 0;
    for line in markdown.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank > 0 { "\n\n" } else { "\n" });
        }
        blank = 0;
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url() -> Url {
        Url::parse("https://example.com/dir/page.html").unwrap()
    }

    fn md(html: &str) -> String {
        to_markdown(html, &url()).markdown
    }

    /// An article long enough for Readability to pick it, around `inner`.
    fn article(inner: &str) -> String {
        let para = "The hearth was the centre of the household for most of history, \
                    where food was cooked, water heated and stories told in the evening. ";
        format!(
            "<!doctype html><html><head><title>Hearths</title></head><body>\
             <nav><ul><li><a href='/'>Home</a></li><li><a href='/shop'>Shop</a></li></ul></nav>\
             <div class='sidebar'><h3>Popular</h3><ul><li><a href='/p/1'>Ten stoves</a></li></ul></div>\
             <article><h1>The hearth</h1><p>{}</p>{inner}<p>{}</p></article>\
             <footer><p>© 2026 Hearth Magazine. <a href='/privacy'>Privacy</a></p></footer>\
             </body></html>",
            para.repeat(3),
            para.repeat(2)
        )
    }

    #[test]
    fn blocks_and_inline_markup() {
        let cases: Vec<(&str, &str)> = vec![
            ("<p>Hello   <b>world</b>!</p>", "Hello **world**!"),
            // Readability makes the page's headings one level lower: the
            // title is the page's only first-level heading.
            (
                "<h1>Title</h1><p>One</p><p>Two</p>",
                "## Title\n\nOne\n\nTwo",
            ),
            ("<ul><li>a<li>b</ul>", "- a\n- b"),
            ("<ol start=3><li>x</li><li>y</li></ol>", "3. x\n4. y"),
            (
                "<blockquote><p>q1</p><p>q2</p></blockquote><p>after</p>",
                "> q1\n>\n> q2\n\nafter",
            ),
            (
                "<pre><code class=\"language-rust\">fn main() {\n    1 &lt; 2\n}</code></pre>",
                "```rust\nfn main() {\n    1 < 2\n}\n```",
            ),
            (
                "<p><a href=\"/x?q=1\">Go <b>there</b></a></p>",
                "[Go **there**](https://example.com/x?q=1)",
            ),
            (
                "<table><tr><th>h1</th><th>h2</th></tr><tr><td>a</td><td>c</td></tr></table>",
                "| h1 | h2 |\n| -- | -- |\n| a  | c  |",
            ),
            ("<p><img alt=\"A cat\" src=x.png></p>", "[image: A cat]"),
            ("<p><img src=x.png>no alt</p>", "no alt"),
        ];
        for (html, expected) in cases {
            assert_eq!(md(html), expected, "{html}");
        }
    }

    #[test]
    fn every_html5_entity_is_decoded() {
        let cases: Vec<(&str, &str)> = vec![
            (
                "<p>x &amp; y &lt;z&gt; &eacute; &#233; &#xE9; &bogus; &amp</p>",
                "x & y \\<z> é é é &bogus; &",
            ),
            ("<p>a&nbsp;b &hellip; &mdash; &rarr;</p>", "a\u{a0}b … — →"),
            (
                "<p>&CounterClockwiseContourIntegral; &NotNestedGreaterGreater; &Aopf; &fjlig;</p>",
                "∳ ⪢̸ 𝔸 fj",
            ),
            // Legacy entities without the semicolon, as browsers read them.
            ("<p>&copy 2026 &AElig</p>", "© 2026 Æ"),
            (
                "<p>&#128512; &#0; &#x110000; &#150;</p>",
                "😀 \u{fffd} \u{fffd} –",
            ),
        ];
        for (html, expected) in cases {
            assert_eq!(md(html), expected, "{html}");
        }
    }

    #[test]
    fn a_paragraph_ends_where_html5_says_it_does() {
        let cases: Vec<(&str, &str)> = vec![
            ("<!doctype html><p>one<div>two</div>", "one\n\ntwo"),
            ("<!doctype html><p>one<ul><li>two</ul>", "one\n\n- two"),
            (
                "<!doctype html><p>one<h1>Two</h1>three",
                "one\n\n## Two\n\nthree",
            ),
            (
                "<!doctype html><p>one<table><tr><th>h</th><th>i</th></tr><tr><td>a</td><td>b</td></tr></table>",
                "one\n\n| h | i |\n| - | - |\n| a | b |",
            ),
            ("<!doctype html><p>one<p>two", "one\n\ntwo"),
            ("<!doctype html><ul><li>a<li>b<p>c</ul>", "- a\n- b\n\n  c"),
        ];
        for (html, expected) in cases {
            assert_eq!(md(html), expected, "{html}");
        }
    }

    #[test]
    fn the_title_is_the_pages_own() {
        let page = article("").replace(
            "<title>Hearths</title>",
            "<title>The hearth: a history</title>",
        );
        assert_eq!(
            to_markdown(&page, &url()).title.as_deref(),
            Some("The hearth: a history")
        );
    }

    #[test]
    fn the_article_is_read_and_the_chrome_left_out() {
        let page = to_markdown(
            &article("<h2>Fire</h2><p>Kept burning all night.</p>"),
            &url(),
        );
        assert_eq!(page.title.as_deref(), Some("Hearths"));
        assert!(
            page.markdown.contains("## Fire\n\nKept burning all night."),
            "{}",
            page.markdown
        );
        assert!(
            page.markdown.contains("The hearth was the centre"),
            "{}",
            page.markdown
        );
        for chrome in ["Shop", "Ten stoves", "Popular", "Privacy", "©"] {
            assert!(
                !page.markdown.contains(chrome),
                "{chrome} in {}",
                page.markdown
            );
        }
    }

    /// A page that marks one main region is read as that region, with its
    /// headings as the page wrote them, and nothing outside it nor its
    /// asides and footers.
    #[test]
    fn a_marked_main_region_is_read_as_it_stands() {
        let body = "<p>The hearth was the centre of the household for most of history, \
                    where food was cooked, water heated and stories told in the \
                    evening.</p><aside>Related: bellows</aside>\
                    <p>Short line.</p><footer>Share this</footer>";
        let page = |main: &str| {
            format!(
                "<title>Hearths</title><header><a href='/'>Site</a></header>\
                 <div class='sidebar'><p>Ten stoves, a very popular list of stoves and more \
                 stoves, with commas, many, many commas, in it.</p></div>{main}\
                 <footer>Privacy</footer>"
            )
        };
        for main in [
            format!("<main><h1>Hearths</h1>{body}</main>"),
            format!("<div role=main><h1>Hearths</h1>{body}</div>"),
            // One region marked twice is still one.
            format!("<main><div role=main><h1>Hearths</h1>{body}</div></main>"),
        ] {
            let c = to_markdown(&page(&main), &url());
            assert_eq!(c.title.as_deref(), Some("Hearths"));
            assert!(
                c.markdown
                    .starts_with("# Hearths\n\nThe hearth was the centre"),
                "{main}: {}",
                c.markdown
            );
            assert!(c.markdown.ends_with("Short line."), "{}", c.markdown);
            for chrome in ["Site", "stoves", "Privacy", "bellows", "Share"] {
                assert!(!c.markdown.contains(chrome), "{chrome} in {}", c.markdown);
            }
        }
        // A hidden main region, an empty one, or two of them say nothing
        // about where the content is: Readability looks for it.
        for main in [
            "<main hidden><p>ghost</p></main>",
            "<main><p>Loading…</p></main>",
            "<main><p>one</p></main><main><p>two</p></main>",
        ] {
            let out = md(&article("").replace("<body>", &format!("<body>{main}")));
            assert!(
                out.starts_with("## The hearth\n\nThe hearth was the centre"),
                "{out}"
            );
            assert!(!out.contains("ghost") && !out.contains("Loading"), "{out}");
        }
    }

    /// A page of link tables under headings, between an introduction and a
    /// closing note. Readability's best element is the first table's body,
    /// and whether it climbs past the table to the section is decided by
    /// rounding: with dom_smoothie alone, 29 to 58 rows give the first
    /// table and nothing else, 59 to 77 the section (and from 78 rows on
    /// the section no longer outscores the table). The page reads whole and
    /// in order whatever the number of rows; so does the same page with a
    /// header row, where the rows Readability takes are a part of the
    /// table.
    #[test]
    fn a_table_is_read_with_the_part_of_the_page_it_is_in() {
        let rows = |first: usize, n: usize| -> (String, Vec<String>) {
            let mirrors = first..first + n;
            let html = mirrors
                .clone()
                .map(|i| {
                    format!(
                        "<tr><td>Mirror {i}</td><td>https://mirror{i}.example.org/pub/</td></tr>"
                    )
                })
                .collect();
            let markdown = mirrors
                .map(|i| format!("Mirror {i}\n\nhttps://mirror{i}.example.org/pub/"))
                .collect();
            (html, markdown)
        };
        let intro = "These are the mirrors we know of. Pick one near you, and tell us, \
                     please, when one stops answering.";
        let outro = "The list grows with your help, and every report, however short, is read.";
        let (unchecked, unchecked_md) = rows(200, 3);
        let page = |table: &str| {
            format!(
                "<!doctype html><title>Mirrors of the free software archive</title>\
                 <div><p>{intro}</p>\
                 <div><h1>Checked mirrors, answered this week</h1>{table}\
                 <h2>Unchecked mirrors, not yet tried by anyone</h2><table>{unchecked}</table></div>\
                 <p>{outro}</p></div>"
            )
        };
        let head = format!("{intro}\n\n## Checked mirrors, answered this week\n\n");
        let tail = format!(
            "\n\n## Unchecked mirrors, not yet tried by anyone\n\n{}\n\n{outro}",
            unchecked_md.join("\n\n")
        );
        for n in (20..=35).chain(50..=65).chain(100..=110) {
            let (checked, checked_md) = rows(0, n);
            let out = md(&page(&format!("<table>{checked}</table>")));
            assert_eq!(
                out,
                format!("{head}{}{tail}", checked_md.join("\n\n")),
                "{n} rows"
            );
            let out = md(&page(&format!(
                "<table><thead><tr><th>Name</th><th>Address</th></tr></thead>\
                 <tbody>{checked}</tbody></table>"
            )));
            assert!(
                out.starts_with(&head) && out.ends_with(&tail),
                "{n} rows: {out}"
            );
            let mut rest = &out[..];
            for i in 0..n {
                let row = format!("| Mirror {i} ");
                let at = rest
                    .find(&row)
                    .unwrap_or_else(|| panic!("{n} rows: {row} in {out}"));
                rest = &rest[at..];
            }
        }
    }

    #[test]
    fn scripts_styles_hidden_parts_and_controls_are_dropped() {
        let html = r#"<!doctype html><html><head><title>T</title>
            <style>p { color: red }</style><script>var x = "<p>not text</p>";</script></head>
            <body><p>Visible</p><div hidden>secret</div><span aria-hidden="true">icon</span>
            <p style="display: none">ghost</p><p style="visibility:hidden">ghost2</p>
            <script>document.write("</scr" + "ipt>")</script>
            <noscript>enable js</noscript><svg><text>chart</text></svg>
            <form><label>Name</label><input name=q><button>Go</button><textarea>typed</textarea></form>
            <template><p>later</p></template><!-- a comment <p>no</p> --></body></html>"#;
        let out = md(html);
        assert!(out.starts_with("Visible"), "{out}");
        for gone in [
            "secret",
            "icon",
            "ghost",
            "not text",
            "scr",
            "enable js",
            "chart",
            "Go",
            "typed",
            "later",
            "comment",
            "color",
        ] {
            assert!(!out.contains(gone), "{gone} in {out:?}");
        }
    }

    #[test]
    fn links_are_absolute_and_only_followable_ones_stay() {
        let html = r##"<html><head><title> My &amp; Page </title><base href="https://cdn.example.org/docs/"></head>
            <body><p><a href="a.html">A</a> <a href="a.html">A again</a> <a href="mailto:x@y.z">mail</a>
            <a href="https://other.example/"><img alt=""></a> <a href="javascript:alert(1)">js</a>
            <a href="JaVaScRiPt:alert(1)">js2</a> <a href="data:text/html,x">data</a> <a href="#top">Top</a></p></body></html>"##;
        let c = to_markdown(html, &Url::parse("https://example.com/").unwrap());
        assert_eq!(c.title.as_deref(), Some("My & Page"));
        assert_eq!(
            c.links,
            vec![
                Link {
                    text: "A".into(),
                    url: "https://cdn.example.org/docs/a.html".into()
                },
                Link {
                    text: "https://other.example/".into(),
                    url: "https://other.example/".into()
                },
            ]
        );
        for word in ["js", "js2", "data", "Top", "mail"] {
            assert!(c.markdown.contains(word), "{word} in {}", c.markdown);
        }
        for gone in ["javascript", "JaVaScRiPt", "data:", "#top"] {
            assert!(!c.markdown.contains(gone), "{gone} in {}", c.markdown);
        }
        assert!(
            c.markdown
                .contains("[A](https://cdn.example.org/docs/a.html)")
        );
        assert!(c.markdown.contains("[mail](mailto:x@y.z)"));
        let og = to_markdown(
            r#"<meta property="og:title" content="From OG"><p>x</p>"#,
            &Url::parse("https://e.com/").unwrap(),
        );
        assert_eq!(og.title.as_deref(), Some("From OG"));
    }

    #[test]
    fn links_are_listed_at_most_max_links_times() {
        let html: String = (0..MAX_LINKS + 50)
            .map(|i| format!("<p><a href='/l/{i}'>link {i}</a></p>"))
            .collect();
        let c = to_markdown(&html, &url());
        assert_eq!(c.links.len(), MAX_LINKS);
        assert_eq!(c.links[0].url, "https://example.com/l/0");
    }

    #[test]
    fn fragments_become_plain_text() {
        assert_eq!(
            text_from_fragment("The <strong>hearth</strong> is&nbsp;warm &amp; <em>old</em>"),
            "The hearth is warm & old"
        );
        assert_eq!(text_from_fragment("a<script>x</script>b"), "ab");
        assert_eq!(
            text_from_fragment("one<br>two<p>three</p>"),
            "one two three"
        );
    }

    /// A deterministic generator, so the fuzz test below is reproducible.
    struct XorShift(u64);
    impl XorShift {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    #[test]
    fn arbitrary_input_never_panics() {
        let pieces = [
            "<",
            ">",
            "</",
            "<!--",
            "-->",
            "<!",
            "<p",
            "<a href=",
            "\"",
            "'",
            "=",
            "&",
            "&#",
            "&#x",
            ";",
            "amp",
            "é",
            "😀",
            "<script>",
            "</script",
            "<pre>",
            "</pre>",
            "<li>",
            "<ul>",
            "</ul>",
            "<table>",
            "<td>",
            "<tr>",
            "</td>",
            "<code>",
            "`",
            "<blockquote>",
            "\n",
            " ",
            "x",
            "/",
            "<main>",
            "</main>",
            "<h2>",
            "<b>",
            "</b>",
            "<title>",
            "<nav>",
            "</nav>",
            "<br/>",
            "<svg/>",
            "<textarea>",
            "</a>",
            "<a href=/x>",
            "\u{a0}",
            "|",
            "[",
            "]",
            "<plaintext>",
            "<base href=",
            "<img alt=",
            "<math>",
            "<select>",
            "<frameset>",
        ];
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..1500 {
            let n = (rng.next() % 60) as usize;
            let mut s = String::new();
            for _ in 0..n {
                s.push_str(pieces[(rng.next() % pieces.len() as u64) as usize]);
            }
            let c = to_markdown(&s, &url());
            assert!(!c.markdown.contains("\n\n\n"), "{s:?} -> {:?}", c.markdown);
            assert!(c.links.len() <= MAX_LINKS);
            let _ = text_from_fragment(&s);
        }
    }

    #[test]
    fn deep_nesting_is_bounded() {
        // Deeper than any recursion in the libraries could take, in a
        // thread with the stack tokio gives its blocking threads.
        let run = |html: String| {
            std::thread::Builder::new()
                .stack_size(2 * 1024 * 1024)
                .spawn(move || md(&html))
                .unwrap()
                .join()
                .unwrap()
        };
        let out = run("<div><blockquote><ul><li>".repeat(5000) + "deep");
        assert!(
            out.ends_with("deep"),
            "{}",
            &out[out.len().saturating_sub(80)..]
        );
        assert!(out.len() < 100_000);
        // The same inside a marked main region, which is read without
        // Readability.
        let words = "deep words for a main region long enough to be read ".repeat(5);
        let out = run(format!(
            "<main>{}{words}</main>",
            "<div><blockquote><ul><li>".repeat(5000)
        ));
        assert!(out.ends_with("long enough to be read"), "{out:.80}");
        assert!(out.len() < 100_000);
        let out = run("<span><b><i>".repeat(20_000) + "inline");
        assert!(out.contains("inline"));
        let many_scripts = "<script>a</script>".repeat(20_000) + "<p>end</p>";
        assert_eq!(run(many_scripts), "end");
    }

    /// The article copied from Readability's tree into htmd's reads as the
    /// article's HTML parsed again would: the copy saves work. (Where
    /// Readability leaves markup the parser would rebuild, such as table
    /// cells in a table it renamed to a `<div>`, the copy keeps the cells
    /// as blocks, each on its own line, where parsing again ran them into
    /// one line.)
    #[test]
    fn the_copied_article_reads_as_its_html_would() {
        let pages = [
            article(
                "<h2>Tools</h2><ul><li>Poker<li>Bellows <b>and</b> <a href='x'>tongs</a></ul>\
                 <pre><code class='language-rust'>fn main() {}</code></pre>\
                 <table><tr><th>a<th>b<tr><td>1<td>2</table>\
                 <blockquote><p>Quoted <i>words</i>&nbsp;&amp; more</p></blockquote>\
                 <p>Text <!-- a comment --> around a comment, <img alt='a fire'> and <br> a break.</p>",
            ),
            article("<div><p>nested <span>inline</span></p><div>block</div> tail text</div>"),
        ];
        for page in pages {
            let url = url();
            let doc = Document::from(page.as_str());
            prune(&doc, Prune::Page);
            let mut r =
                Readability::with_document(doc, Some(url.as_str()), Some(readability_config()))
                    .unwrap();
            let article = r.parse().unwrap();
            let converter = converter();
            let reparsed = converter.html_to_tree(&article.content).unwrap();
            tidy_links(&reparsed, &url);
            let expected = tidy(&converter.tree_to_markdown(&reparsed));
            assert!(expected.contains("hearth"), "{expected}");
            assert_eq!(md(&page), expected);
        }
    }
}
