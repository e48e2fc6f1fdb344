//! Artifacts: a page, a picture, a document or a chart the model makes in
//! a conversation and shows beside it. Each update is a new version, so
//! the person can step back through them; `create_artifact` and
//! `update_artifact` are the skills that make them, validated here before
//! anything is stored.
//!
//! A chart is a Chart.js configuration as JSON: one self-contained
//! library with no code generation at run time, so it runs inside a frame
//! whose policy admits no `eval`, and its configuration is plain data the
//! model writes well.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::skill::call::{SkillError, SkillOutput};
use crate::skill::{Category, SkillDefinition, SkillId, Tier};

/// The skill that creates an artifact.
pub const CREATE_ID: &str = "create_artifact";
/// The skill that adds a version to one.
pub const UPDATE_ID: &str = "update_artifact";

/// The longest title, in characters.
pub const MAX_TITLE: usize = 200;
/// The largest source of one version, in bytes.
pub const MAX_SOURCE_BYTES: usize = 512 * 1024;
/// The largest artifact, all its versions together, in bytes.
pub const MAX_TOTAL_BYTES: usize = 4 * 1024 * 1024;
/// The most versions one artifact keeps.
pub const MAX_VERSIONS: usize = 50;

/// What an artifact's source is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArtifactKind {
    Html,
    Svg,
    Markdown,
    Chart,
}

impl ArtifactKind {
    pub const ALL: [ArtifactKind; 4] = [
        ArtifactKind::Html,
        ArtifactKind::Svg,
        ArtifactKind::Markdown,
        ArtifactKind::Chart,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ArtifactKind::Html => "html",
            ArtifactKind::Svg => "svg",
            ArtifactKind::Markdown => "markdown",
            ArtifactKind::Chart => "chart",
        }
    }

    /// What the person reads for it.
    pub fn label(self) -> &'static str {
        match self {
            ArtifactKind::Html => "HTML page",
            ArtifactKind::Svg => "SVG picture",
            ArtifactKind::Markdown => "Markdown document",
            ArtifactKind::Chart => "Chart",
        }
    }

    /// The file name extension of a download.
    pub fn extension(self) -> &'static str {
        match self {
            ArtifactKind::Html => "html",
            ArtifactKind::Svg => "svg",
            ArtifactKind::Markdown => "md",
            ArtifactKind::Chart => "json",
        }
    }

    /// The MIME type of a download.
    pub fn mime(self) -> &'static str {
        match self {
            ArtifactKind::Html => "text/html",
            ArtifactKind::Svg => "image/svg+xml",
            ArtifactKind::Markdown => "text/markdown",
            ArtifactKind::Chart => "application/json",
        }
    }
}

/// One version of an artifact's source.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArtifactVersion {
    pub source: String,
    pub created_ms: f64,
}

/// An artifact and every version it has had, oldest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Artifact {
    pub id: String,
    pub conversation_id: String,
    pub title: String,
    pub kind: ArtifactKind,
    pub versions: Vec<ArtifactVersion>,
    pub created_ms: f64,
    pub updated_ms: f64,
}

impl Artifact {
    /// The newest version's source.
    pub fn latest(&self) -> &str {
        self.versions.last().map_or("", |v| v.source.as_str())
    }

    /// The file name a download is given: the title in safe characters
    /// and the kind's extension.
    pub fn file_name(&self) -> String {
        let mut stem = String::new();
        for c in self.title.chars() {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                stem.push(c.to_ascii_lowercase());
            } else if !stem.ends_with('-') && !stem.is_empty() {
                stem.push('-');
            }
            if stem.len() >= 60 {
                break;
            }
        }
        let stem = stem.trim_end_matches('-');
        let stem = if stem.is_empty() { "artifact" } else { stem };
        format!("{stem}.{}", self.kind.extension())
    }

    fn total_bytes(&self) -> usize {
        self.versions.iter().map(|v| v.source.len()).sum()
    }

    /// What the skills answer: everything but the sources, so the model
    /// is not sent back what it just wrote.
    pub fn summary(&self) -> Value {
        json!({
            "id": self.id,
            "title": self.title,
            "kind": self.kind.name(),
            "version": self.versions.len(),
            "bytes": self.latest().len(),
        })
    }
}

fn id(s: &str) -> SkillId {
    SkillId::new(s).unwrap_or_else(|e| panic!("built-in skill id {s:?}: {e}"))
}

pub fn create_definition() -> SkillDefinition {
    SkillDefinition::new(
        id(CREATE_ID),
        "Create artifact",
        Tier::Core,
        Category::Productivity,
    )
    .with_icon("artifact")
    .with_description(
        "Show the person a live preview beside the chat: an HTML page, an SVG picture, a Markdown document or a chart. \
         Use it for anything they will look at, run or keep, rather than pasting long code into the reply.",
    )
    .with_tags([
        "artifact", "preview", "html", "page", "svg", "chart", "graph", "plot", "document", "canvas",
    ])
    .with_examples([
        "Make a bar chart of these sales figures",
        "Draw an SVG logo of a house",
        "Build a small HTML page with a tip calculator",
        "Write this up as a document I can download",
    ])
    .with_input_schema(schema(CREATE_SCHEMA))
    .with_output_schema(artifact_output_schema())
}

pub fn update_definition() -> SkillDefinition {
    SkillDefinition::new(
        id(UPDATE_ID),
        "Update artifact",
        Tier::Core,
        Category::Productivity,
    )
    .with_icon("artifact")
    .with_description(
        "Replace an artifact of this conversation with a new version: give its id and the whole new source \
         (not a patch), and a new title if it changes. Earlier versions are kept.",
    )
    .with_tags(["artifact", "edit", "revise", "change", "version"])
    .with_examples(["Make the bars blue", "Add a reset button to the page"])
    .with_input_schema(schema(UPDATE_SCHEMA))
    .with_output_schema(artifact_output_schema())
}

fn artifact_output_schema() -> Value {
    schema(OUTPUT_SCHEMA)
}

/// A schema written as JSON text: parsing it takes less code in the first
/// load than building it value by value.
fn schema(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("artifact skill schema: {e}"))
}

const CREATE_SCHEMA: &str = r#"{"type": "object", "properties": {
    "title": {"type": "string", "minLength": 1, "maxLength": 200, "description": "A short title"},
    "kind": {"enum": ["html", "svg", "markdown", "chart"], "description": "html: one whole HTML page (inline CSS and JavaScript; it runs with no network, so nothing loads from elsewhere); svg: one <svg> element; markdown: a document; chart: a Chart.js configuration as JSON, {\"type\": \"bar\", \"data\": {\"labels\": [...], \"datasets\": [{\"label\": ..., \"data\": [...]}]}, \"options\": {...}}"},
    "source": {"type": "string", "minLength": 1, "maxLength": 524288, "description": "The whole source"}},
  "required": ["title", "kind", "source"], "additionalProperties": false}"#;

const UPDATE_SCHEMA: &str = r#"{"type": "object", "properties": {
    "id": {"type": "string", "minLength": 1, "maxLength": 200, "description": "The artifact's id, from create_artifact"},
    "source": {"type": "string", "minLength": 1, "maxLength": 524288, "description": "The whole new source"},
    "title": {"type": "string", "minLength": 1, "maxLength": 200, "description": "A new title (optional)"}},
  "required": ["id", "source"], "additionalProperties": false}"#;

const OUTPUT_SCHEMA: &str = r#"{"type": "object", "properties": {"artifact": {"type": "object",
    "properties": {"id": {"type": "string"}, "title": {"type": "string"}, "kind": {"type": "string"},
      "version": {"type": "integer"}, "bytes": {"type": "integer"}},
    "required": ["id", "title", "kind", "version"]}}, "required": ["artifact"]}"#;

/// The arguments of `create_artifact`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateArtifact {
    pub title: String,
    pub kind: ArtifactKind,
    pub source: String,
}

/// The arguments of `update_artifact`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpdateArtifact {
    pub id: String,
    pub source: String,
    #[serde(default)]
    pub title: Option<String>,
}

fn parse<T: serde::de::DeserializeOwned>(arguments: &Value, skill: &str) -> Result<T, SkillError> {
    serde_json::from_value(arguments.clone()).map_err(|e| SkillError::new(format!("{skill}: {e}")))
}

pub fn parse_create(arguments: &Value) -> Result<CreateArtifact, SkillError> {
    parse(arguments, CREATE_ID)
}

pub fn parse_update(arguments: &Value) -> Result<UpdateArtifact, SkillError> {
    parse(arguments, UPDATE_ID)
}

fn clean_title(title: &str) -> Result<String, SkillError> {
    let t = title.trim();
    if t.is_empty() {
        return Err(SkillError::new("an artifact needs a title"));
    }
    if t.chars().count() > MAX_TITLE {
        return Err(SkillError::new(format!(
            "the title is {} characters, over the limit of {MAX_TITLE}",
            t.chars().count()
        )));
    }
    Ok(t.to_string())
}

/// Why a source cannot be an artifact of `kind`, if it cannot.
pub fn validate(kind: ArtifactKind, source: &str) -> Result<(), SkillError> {
    if source.trim().is_empty() {
        return Err(SkillError::new("the source is empty"));
    }
    if source.len() > MAX_SOURCE_BYTES {
        return Err(SkillError::new(format!(
            "the source is {} bytes, over the limit of {MAX_SOURCE_BYTES} bytes for one version",
            source.len()
        )));
    }
    match kind {
        ArtifactKind::Html | ArtifactKind::Markdown => Ok(()),
        ArtifactKind::Svg => validate_svg(source),
        ArtifactKind::Chart => validate_chart(source),
    }
}

fn validate_svg(source: &str) -> Result<(), SkillError> {
    let mut rest = source.trim_start();
    // An XML declaration and comments may come before the element.
    loop {
        if let Some(after) = rest.strip_prefix("<?xml") {
            rest = after.split_once("?>").map_or("", |(_, r)| r).trim_start();
        } else if let Some(after) = rest.strip_prefix("<!--") {
            rest = after.split_once("-->").map_or("", |(_, r)| r).trim_start();
        } else {
            break;
        }
    }
    let opens = rest
        .get(..4)
        .is_some_and(|s| s.eq_ignore_ascii_case("<svg"))
        && rest[4..]
            .chars()
            .next()
            .is_some_and(|c| c.is_whitespace() || c == '>' || c == '/');
    if !opens {
        return Err(SkillError::new(
            "an svg artifact must start with an <svg> element",
        ));
    }
    if !source.trim_end().to_ascii_lowercase().ends_with("</svg>") && !rest.contains("/>") {
        return Err(SkillError::new("the <svg> element is not closed"));
    }
    Ok(())
}

/// The chart types Chart.js draws without plugins.
pub const CHART_TYPES: [&str; 8] = [
    "bar",
    "line",
    "pie",
    "doughnut",
    "radar",
    "polarArea",
    "scatter",
    "bubble",
];

fn validate_chart(source: &str) -> Result<(), SkillError> {
    let spec: Value = serde_json::from_str(source).map_err(|e| {
        SkillError::new(format!(
            "a chart is a Chart.js configuration in JSON, and this is not JSON: {e}"
        ))
    })?;
    let Some(obj) = spec.as_object() else {
        return Err(SkillError::new(
            "a chart is a JSON object with \"type\" and \"data\"",
        ));
    };
    let kind = obj.get("type").and_then(Value::as_str).ok_or_else(|| {
        SkillError::new(format!(
            "the chart needs a \"type\": one of {}",
            CHART_TYPES.join(", ")
        ))
    })?;
    if !CHART_TYPES.contains(&kind) {
        return Err(SkillError::new(format!(
            "\"{kind}\" is not a chart type; use one of {}",
            CHART_TYPES.join(", ")
        )));
    }
    let datasets = obj
        .get("data")
        .and_then(Value::as_object)
        .and_then(|d| d.get("datasets"))
        .and_then(Value::as_array)
        .ok_or_else(|| SkillError::new("the chart needs \"data\": {\"datasets\": [...]}"))?;
    if datasets.is_empty() {
        return Err(SkillError::new("the chart has no datasets"));
    }
    for (i, d) in datasets.iter().enumerate() {
        if !d.get("data").is_some_and(Value::is_array) {
            return Err(SkillError::new(format!(
                "dataset {} needs \"data\": an array of values",
                i + 1
            )));
        }
    }
    if let Some(labels) = obj.get("data").and_then(|d| d.get("labels"))
        && !labels.is_array()
    {
        return Err(SkillError::new("\"labels\" must be an array"));
    }
    if obj.get("options").is_some_and(|o| !o.is_object()) {
        return Err(SkillError::new("\"options\" must be an object"));
    }
    Ok(())
}

/// Makes the artifact `create_artifact` describes, in the conversation
/// `conversation_id`.
pub fn create(
    args: CreateArtifact,
    conversation_id: Option<&str>,
    new_id: String,
    now_ms: f64,
) -> Result<(SkillOutput, Artifact), SkillError> {
    let conversation_id = conversation_id.filter(|c| !c.is_empty()).ok_or_else(|| {
        SkillError::new("an artifact belongs to a conversation; ask for it in a chat")
    })?;
    let title = clean_title(&args.title)?;
    validate(args.kind, &args.source)?;
    let artifact = Artifact {
        id: new_id,
        conversation_id: conversation_id.to_string(),
        title,
        kind: args.kind,
        versions: vec![ArtifactVersion {
            source: args.source,
            created_ms: now_ms,
        }],
        created_ms: now_ms,
        updated_ms: now_ms,
    };
    let text = format!(
        "Created the {} \"{}\" (id {}); the person sees it beside the chat.",
        artifact.kind.label().to_lowercase(),
        artifact.title,
        artifact.id
    );
    let out = SkillOutput::text_and_json(text, json!({"artifact": artifact.summary()}));
    Ok((out, artifact))
}

/// Adds the version `update_artifact` describes to `existing`, which must
/// belong to the conversation the call came from.
pub fn update(
    existing: Option<Artifact>,
    args: UpdateArtifact,
    conversation_id: Option<&str>,
    now_ms: f64,
) -> Result<(SkillOutput, Artifact), SkillError> {
    let missing = || {
        SkillError::new(format!(
            "this conversation has no artifact with the id \"{}\"; create one with {CREATE_ID}",
            args.id
        ))
    };
    let mut artifact = existing.ok_or_else(missing)?;
    if conversation_id != Some(artifact.conversation_id.as_str()) {
        return Err(missing());
    }
    validate(artifact.kind, &args.source)?;
    let title = match &args.title {
        Some(t) => clean_title(t)?,
        None => artifact.title.clone(),
    };
    if args.source == artifact.latest() && title == artifact.title {
        return Err(SkillError::new(
            "nothing changed: the source and title are the same as the current version",
        ));
    }
    if artifact.versions.len() >= MAX_VERSIONS {
        return Err(SkillError::new(format!(
            "\"{}\" already has {MAX_VERSIONS} versions, the most an artifact keeps; create a new artifact instead",
            artifact.title
        )));
    }
    let total = artifact.total_bytes() + args.source.len();
    if total > MAX_TOTAL_BYTES {
        return Err(SkillError::new(format!(
            "with this version \"{}\" would hold {total} bytes, over the limit of {MAX_TOTAL_BYTES} bytes for all versions together; create a new artifact instead",
            artifact.title
        )));
    }
    artifact.title = title;
    artifact.versions.push(ArtifactVersion {
        source: args.source,
        created_ms: now_ms,
    });
    artifact.updated_ms = now_ms;
    let text = format!(
        "Updated \"{}\" to version {}.",
        artifact.title,
        artifact.versions.len()
    );
    let out = SkillOutput::text_and_json(text, json!({"artifact": artifact.summary()}));
    Ok((out, artifact))
}

/// The artifact a tool result of `create_artifact` or `update_artifact`
/// names, read from its structured output: the chat's card opens it.
pub fn artifact_of_result(skill_id: &str, structured: Option<&Value>) -> Option<String> {
    if skill_id != CREATE_ID && skill_id != UPDATE_ID {
        return None;
    }
    structured?
        .get("artifact")?
        .get("id")?
        .as_str()
        .map(str::to_string)
}

/// The policy of the sandbox page every preview runs in
/// (`public/sandbox/artifact.html`): inline scripts and styles, pictures
/// and fonts from `data:`/`blob:` only, and nothing that reaches a
/// network, another frame, a form target or a base URL. The preview's own
/// document adds its kind's policy on top; both are enforced.
pub const FRAME_POLICY: &str = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; font-src data:; media-src data: blob:; connect-src 'none'; frame-src 'none'; worker-src 'none'; manifest-src 'none'; base-uri 'none'; object-src 'none'; form-action 'none'";

/// The policy an HTML artifact's document starts with: the frame's.
pub const HTML_POLICY: &str = FRAME_POLICY;

/// The first script of an HTML preview, before any of the page's own. The
/// policy cannot govern WebRTC, whose connection checks reach any address
/// over UDP, so its interfaces are taken from the page's realm; and a
/// frame inside the preview would bring a fresh realm with them, so no
/// frame's window is handed out, frame elements cannot be created, and
/// every frame, object or embed the page adds anyway (in its document or
/// a shadow root) is removed. Chromium connects to a parsed frame's
/// address before the policy refuses its load, so markup a script hands
/// the parser (`innerHTML`, `document.write`, `DOMParser`, ...) has its
/// frame tags renamed first, with functions captured before the page can
/// replace them.
pub const HTML_PRELUDE: &str = "(function(){'use strict';var names=['RTCPeerConnection','webkitRTCPeerConnection','RTCDataChannel','RTCSessionDescription','RTCIceCandidate','RTCRtpSender','RTCRtpReceiver','RTCRtpTransceiver','RTCDtlsTransport','RTCIceTransport','RTCSctpTransport','RTCCertificate','RTCPeerConnectionIceEvent','RTCDataChannelEvent','RTCTrackEvent','WebTransport'];for(var i=0;i<names.length;i++){try{delete window[names[i]];}catch(e){}}var none={get:function(){return null;},configurable:false};[HTMLIFrameElement,HTMLFrameElement,HTMLObjectElement,HTMLEmbedElement].forEach(function(C){if(!C)return;['contentWindow','contentDocument'].forEach(function(k){if(k in C.prototype)Object.defineProperty(C.prototype,k,none);});if('getSVGDocument' in C.prototype)Object.defineProperty(C.prototype,'getSVGDocument',{value:function(){return null;},configurable:false});});var sel='iframe,frame,object,embed,frameset';function sweep(root){var found=root.querySelectorAll?root.querySelectorAll(sel):[];for(var j=0;j<found.length;j++)found[j].remove();}var watch=new MutationObserver(function(records){records.forEach(function(r){r.addedNodes.forEach(function(n){if(n.nodeType!==1)return;if(n.matches(sel))n.remove();else sweep(n);});});});watch.observe(document,{childList:true,subtree:true});var make=Document.prototype.createElement;Object.defineProperty(Document.prototype,'createElement',{value:function(n,o){if(/^(i?frame|object|embed|portal|fencedframe)$/i.test(String(n)))n='x-inert-'+String(n);return make.call(this,n,o);},configurable:false});var makeNS=Document.prototype.createElementNS;Object.defineProperty(Document.prototype,'createElementNS',{value:function(ns,n,o){if(/^(i?frame|object|embed|portal|fencedframe)$/i.test(String(n).split(':').pop()))n='x-inert-'+String(n).split(':').pop();return makeNS.call(this,ns,n,o);},configurable:false});var attach=Element.prototype.attachShadow;Object.defineProperty(Element.prototype,'attachShadow',{value:function(o){var root=attach.call(this,o);watch.observe(root,{childList:true,subtree:true});return root;},configurable:false});var R=Reflect.apply,exec=RegExp.prototype.exec,cut=String.prototype.slice,Str=String;var tag=/<(\\/?)(i?frame|object|embed|portal|fencedframe|frameset)(?=[\\s\\/>])/gi;function inert(v){var s=Str(v),out='',last=0,m;tag.lastIndex=0;while((m=R(exec,tag,[s]))!==null){out+=R(cut,s,[last,m.index])+'<'+m[1]+'x-inert-'+m[2];last=tag.lastIndex;}return out+R(cut,s,[last]);}function setter(C,k){var d=C&&Object.getOwnPropertyDescriptor(C.prototype,k);if(!d||!d.set)return;Object.defineProperty(C.prototype,k,{get:d.get,set:function(v){R(d.set,this,[inert(v)]);},configurable:false});}setter(Element,'innerHTML');setter(Element,'outerHTML');setter(window.ShadowRoot,'innerHTML');function method(C,k,at){var f=C&&C.prototype[k];if(typeof f!=='function')return;Object.defineProperty(C.prototype,k,{value:function(){var a=Object.create(null);a.length=arguments.length;for(var i=0;i<arguments.length;i++)a[i]=(at<0||i===at)?inert(arguments[i]):arguments[i];return R(f,this,a);},configurable:false,writable:false});}method(Element,'insertAdjacentHTML',1);method(Element,'setHTMLUnsafe',0);method(Element,'setHTML',0);method(window.ShadowRoot,'setHTMLUnsafe',0);method(window.ShadowRoot,'setHTML',0);method(Document,'write',-1);method(Document,'writeln',-1);method(Document,'execCommand',2);method(Range,'createContextualFragment',0);method(window.DOMParser,'parseFromString',0);if(typeof Document.parseHTMLUnsafe==='function'){var parse=Document.parseHTMLUnsafe;Object.defineProperty(Document,'parseHTMLUnsafe',{value:function(h,o){return R(parse,this,[inert(h),o]);},configurable:false,writable:false});}try{delete window.XSLTProcessor;}catch(e){}})();";

/// The policy of SVG and Markdown previews: no scripts at all.
pub const STILL_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:; base-uri 'none'; form-action 'none'";

/// Draws a chart from the configuration in `#spec`, still (no animation),
/// filling the frame; a configuration Chart.js refuses is shown as text.
pub const CHART_SCRIPT: &str = "(function(){var el=document.getElementById('chart');try{var spec=JSON.parse(document.getElementById('spec').textContent);spec.options=spec.options||{};spec.options.animation=false;spec.options.responsive=true;spec.options.maintainAspectRatio=false;new Chart(el,spec);}catch(e){var p=document.createElement('p');p.className='error';p.textContent='The chart could not be drawn: '+e.message;document.body.replaceChildren(p);}})();";

const BASE_STYLE: &str =
    "html,body{margin:0;background:#fff;color:#1b1b1f;font:15px/1.5 system-ui,sans-serif}";

/// The elements that hold another document. The browser starts
/// connecting to a frame's address as soon as the element is parsed,
/// before the policy refuses the load, so a preview has none of them.
const FRAME_TAGS: [&str; 6] = [
    "iframe",
    "frame",
    "object",
    "embed",
    "portal",
    "fencedframe",
];

/// `source` with every tag that would make a frame renamed to an inert
/// element (`<iframe` becomes `<x-inert-iframe`), wherever it is written,
/// scripts' strings included.
pub fn without_frames(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    while let Some(at) = rest.find('<') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let closing = after.starts_with('/');
        let name_start = if closing { &after[1..] } else { after };
        let frame = FRAME_TAGS.iter().find(|t| {
            name_start.len() >= t.len()
                && name_start[..t.len()].eq_ignore_ascii_case(t)
                && !name_start[t.len()..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
        });
        match frame {
            Some(t) => {
                out.push_str(if closing { "</x-inert-" } else { "<x-inert-" });
                out.push_str(t);
                let skip = 1 + usize::from(closing) + t.len();
                rest = &rest[at + skip..];
            }
            None => {
                out.push('<');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `'sha256-…'` of a script's text, as a policy admits it.
pub fn script_hash(text: &str) -> String {
    use base64::Engine;
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(text.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// What a preview draws besides the source: the Markdown rendered to
/// safe HTML (by the app's renderer), or Chart.js's text.
#[derive(Clone, Copy, Debug)]
pub enum PreviewInput<'a> {
    /// An HTML page or an SVG picture: the source alone.
    Source,
    /// A Markdown document, already rendered to safe HTML.
    Rendered(&'a str),
    /// A chart: the library that draws it.
    ChartLibrary(&'a str),
}

/// The document a preview frame shows for `source` of `kind`, its policy
/// the first thing in it. `None` when what the kind needs is missing.
pub fn preview_document(
    kind: ArtifactKind,
    title: &str,
    source: &str,
    input: PreviewInput,
) -> Option<String> {
    use crate::mcp::apps::with_policy;
    let title = hearth_base::html::escape(title);
    match (kind, input) {
        (ArtifactKind::Html, PreviewInput::Source) => {
            // The prelude goes right after the policy, before anything of
            // the page's.
            let doc = with_policy(&without_frames(source), HTML_POLICY);
            let meta =
                format!("<meta http-equiv=\"Content-Security-Policy\" content=\"{HTML_POLICY}\">");
            let at = doc.find(&meta)? + meta.len();
            Some(format!(
                "{}<script>{HTML_PRELUDE}</script>{}",
                &doc[..at],
                &doc[at..]
            ))
        }
        (ArtifactKind::Svg, PreviewInput::Source) => Some(with_policy(
            &format!(
                "<!doctype html><title>{title}</title><style>{BASE_STYLE}html,body{{height:100%}}body{{display:grid;place-items:center}}svg{{max-width:100%;max-height:100vh}}</style>{source}"
            ),
            STILL_POLICY,
        )),
        (ArtifactKind::Markdown, PreviewInput::Rendered(html)) => Some(with_policy(
            &format!(
                "<!doctype html><title>{title}</title><style>{BASE_STYLE}body{{padding:1rem 1.5rem;max-width:48rem}}pre{{overflow:auto;background:#f4f4f6;padding:.6rem}}code{{font-family:ui-monospace,monospace}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:.2rem .5rem}}img{{max-width:100%}}</style><body>{html}</body>"
            ),
            STILL_POLICY,
        )),
        (ArtifactKind::Chart, PreviewInput::ChartLibrary(library)) => {
            // Parsed and written again, with every '<' escaped, so the
            // configuration cannot close its script element.
            let spec: Value = serde_json::from_str(source).ok()?;
            let spec = spec.to_string().replace('<', "\\u003c");
            let policy = format!(
                "default-src 'none'; script-src {} {}; style-src 'unsafe-inline'; img-src data: blob:; base-uri 'none'; form-action 'none'",
                script_hash(library),
                script_hash(CHART_SCRIPT)
            );
            Some(with_policy(
                &format!(
                    "<!doctype html><title>{title}</title><style>{BASE_STYLE}html,body{{height:100%}}body{{box-sizing:border-box;padding:.75rem}}.error{{color:#b00020}}</style><canvas id=\"chart\" role=\"img\" aria-label=\"{title}\"></canvas><script type=\"application/json\" id=\"spec\">{spec}</script><script>{library}</script><script>{CHART_SCRIPT}</script>"
                ),
                &policy,
            ))
        }
        (
            ArtifactKind::Html | ArtifactKind::Svg | ArtifactKind::Markdown | ArtifactKind::Chart,
            _,
        ) => None,
    }
}

/// One line of a diff between two versions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiffLine<'a> {
    Same(&'a str),
    Added(&'a str),
    Removed(&'a str),
}

/// The most lines a diff compares by their longest common subsequence;
/// past it, the common head and tail are kept and the middle is shown as
/// removed then added, so a huge page never stalls the panel.
const DIFF_CELLS: usize = 4_000_000;

/// The line diff from `old` to `new`: the common head and tail, and the
/// longest common subsequence of the lines between.
pub fn line_diff<'a>(old: &'a str, new: &'a str) -> Vec<DiffLine<'a>> {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (am, bm) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    let mut out: Vec<DiffLine> = a[..head].iter().map(|l| DiffLine::Same(l)).collect();
    if am.len().saturating_mul(bm.len()) > DIFF_CELLS {
        out.extend(am.iter().map(|l| DiffLine::Removed(l)));
        out.extend(bm.iter().map(|l| DiffLine::Added(l)));
    } else {
        // lcs[i][j]: the longest common subsequence of am[i..] and bm[j..].
        let (n, m) = (am.len(), bm.len());
        let mut lcs = vec![0u32; (n + 1) * (m + 1)];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                lcs[i * (m + 1) + j] = if am[i] == bm[j] {
                    lcs[(i + 1) * (m + 1) + j + 1] + 1
                } else {
                    lcs[(i + 1) * (m + 1) + j].max(lcs[i * (m + 1) + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n && j < m {
            if am[i] == bm[j] {
                out.push(DiffLine::Same(am[i]));
                i += 1;
                j += 1;
            } else if lcs[(i + 1) * (m + 1) + j] >= lcs[i * (m + 1) + j + 1] {
                out.push(DiffLine::Removed(am[i]));
                i += 1;
            } else {
                out.push(DiffLine::Added(bm[j]));
                j += 1;
            }
        }
        out.extend(am[i..].iter().map(|l| DiffLine::Removed(l)));
        out.extend(bm[j..].iter().map(|l| DiffLine::Added(l)));
    }
    out.extend(a[a.len() - tail..].iter().map(|l| DiffLine::Same(l)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHART: &str =
        r#"{"type":"bar","data":{"labels":["a","b"],"datasets":[{"label":"n","data":[1,2]}]}}"#;

    fn made(kind: ArtifactKind, source: &str) -> Artifact {
        let args = CreateArtifact {
            title: "T".into(),
            kind,
            source: source.into(),
        };
        create(args, Some("c1"), "a1".into(), 1.0).unwrap().1
    }

    fn err(r: Result<(), SkillError>) -> String {
        r.unwrap_err().message
    }

    #[test]
    fn each_kind_accepts_its_own_shape() {
        for (kind, source) in [
            (ArtifactKind::Html, "<!doctype html><p>hi"),
            (ArtifactKind::Markdown, "# Title"),
            (ArtifactKind::Svg, "<svg viewBox=\"0 0 1 1\"></svg>"),
            (
                ArtifactKind::Svg,
                "<?xml version=\"1.0\"?>\n<!-- a -->\n<SVG xmlns=\"x\"/>",
            ),
            (ArtifactKind::Chart, CHART),
        ] {
            assert_eq!(validate(kind, source), Ok(()), "{kind:?} {source}");
        }
    }

    #[test]
    fn bad_sources_are_refused_with_the_reason() {
        let cases = [
            (ArtifactKind::Html, "   ", "the source is empty"),
            (
                ArtifactKind::Svg,
                "<p>no</p>",
                "an svg artifact must start with an <svg> element",
            ),
            (
                ArtifactKind::Svg,
                "<svgx></svgx>",
                "an svg artifact must start with an <svg> element",
            ),
            (
                ArtifactKind::Svg,
                "<svg viewBox=\"0 0 1 1\"><rect>",
                "the <svg> element is not closed",
            ),
            (
                ArtifactKind::Chart,
                "[1, 2]",
                "a chart is a JSON object with \"type\" and \"data\"",
            ),
            (
                ArtifactKind::Chart,
                r#"{"type":"pie3d","data":{"datasets":[{"data":[]}]}}"#,
                "\"pie3d\" is not a chart type; use one of bar, line, pie, doughnut, radar, polarArea, scatter, bubble",
            ),
            (
                ArtifactKind::Chart,
                r#"{"data":{"datasets":[]}}"#,
                "the chart needs a \"type\": one of bar, line, pie, doughnut, radar, polarArea, scatter, bubble",
            ),
            (
                ArtifactKind::Chart,
                r#"{"type":"bar","data":{}}"#,
                "the chart needs \"data\": {\"datasets\": [...]}",
            ),
            (
                ArtifactKind::Chart,
                r#"{"type":"bar","data":{"datasets":[]}}"#,
                "the chart has no datasets",
            ),
            (
                ArtifactKind::Chart,
                r#"{"type":"bar","data":{"datasets":[{"data":3}]}}"#,
                "dataset 1 needs \"data\": an array of values",
            ),
            (
                ArtifactKind::Chart,
                r#"{"type":"bar","data":{"labels":"x","datasets":[{"data":[]}]}}"#,
                "\"labels\" must be an array",
            ),
            (
                ArtifactKind::Chart,
                r#"{"type":"bar","data":{"datasets":[{"data":[]}]},"options":[]}"#,
                "\"options\" must be an object",
            ),
        ];
        for (kind, source, want) in cases {
            assert_eq!(err(validate(kind, source)), want, "{kind:?} {source}");
        }
        let not_json = err(validate(ArtifactKind::Chart, "{type: bar}"));
        assert!(
            not_json
                .starts_with("a chart is a Chart.js configuration in JSON, and this is not JSON:"),
            "{not_json}"
        );
    }

    #[test]
    fn a_source_over_the_limit_is_refused_whatever_its_kind() {
        let big = "x".repeat(MAX_SOURCE_BYTES + 1);
        for kind in ArtifactKind::ALL {
            assert_eq!(
                err(validate(kind, &big)),
                format!(
                    "the source is {} bytes, over the limit of {MAX_SOURCE_BYTES} bytes for one version",
                    MAX_SOURCE_BYTES + 1
                )
            );
        }
    }

    #[test]
    fn create_makes_version_one_in_the_calls_conversation() {
        let args =
            parse_create(&json!({"title": "  Sales  ", "kind": "chart", "source": CHART})).unwrap();
        let (out, a) = create(args, Some("c1"), "a1".into(), 5.0).unwrap();
        assert_eq!(
            a,
            Artifact {
                id: "a1".into(),
                conversation_id: "c1".into(),
                title: "Sales".into(),
                kind: ArtifactKind::Chart,
                versions: vec![ArtifactVersion {
                    source: CHART.into(),
                    created_ms: 5.0
                }],
                created_ms: 5.0,
                updated_ms: 5.0,
            }
        );
        assert_eq!(
            out.structured,
            Some(
                json!({"artifact": {"id": "a1", "title": "Sales", "kind": "chart", "version": 1, "bytes": CHART.len()}})
            )
        );
        assert_eq!(
            artifact_of_result(CREATE_ID, out.structured.as_ref()),
            Some("a1".into())
        );
        assert_eq!(artifact_of_result("notes", out.structured.as_ref()), None);
    }

    #[test]
    fn create_needs_a_conversation_a_title_and_a_known_kind() {
        let args = || CreateArtifact {
            title: "T".into(),
            kind: ArtifactKind::Html,
            source: "<p>".into(),
        };
        assert_eq!(
            create(args(), None, "a".into(), 1.0).unwrap_err().message,
            "an artifact belongs to a conversation; ask for it in a chat"
        );
        let mut blank = args();
        blank.title = "  ".into();
        assert_eq!(
            create(blank, Some("c"), "a".into(), 1.0)
                .unwrap_err()
                .message,
            "an artifact needs a title"
        );
        let unknown = parse_create(&json!({"title": "T", "kind": "pdf", "source": "x"}));
        assert!(
            unknown
                .unwrap_err()
                .message
                .contains("unknown variant `pdf`"),
            "the kind is named"
        );
        let extra = parse_create(&json!({"title": "T", "kind": "html", "source": "x", "x": 1}));
        assert!(extra.unwrap_err().message.contains("unknown field `x`"));
    }

    #[test]
    fn update_adds_a_version_and_keeps_the_old_ones() {
        let a = made(ArtifactKind::Html, "<p>one</p>");
        let args =
            parse_update(&json!({"id": "a1", "source": "<p>two</p>", "title": "New"})).unwrap();
        let (out, b) = update(Some(a.clone()), args, Some("c1"), 9.0).unwrap();
        assert_eq!(b.title, "New");
        assert_eq!(b.latest(), "<p>two</p>");
        assert_eq!(b.versions[0], a.versions[0]);
        assert_eq!(b.versions.len(), 2);
        assert_eq!((b.created_ms, b.updated_ms), (1.0, 9.0));
        assert_eq!(
            out.content[..1],
            [crate::skill::call::Content::Text {
                text: "Updated \"New\" to version 2.".into()
            }]
        );
    }

    #[test]
    fn update_refuses_what_it_cannot_do() {
        let a = made(ArtifactKind::Svg, "<svg></svg>");
        let args = |source: &str| UpdateArtifact {
            id: "a1".into(),
            source: source.into(),
            title: None,
        };
        let gone =
            "this conversation has no artifact with the id \"a1\"; create one with create_artifact";
        assert_eq!(
            update(None, args("<svg/>"), Some("c1"), 2.0)
                .unwrap_err()
                .message,
            gone
        );
        // Another conversation's artifact is as good as absent.
        assert_eq!(
            update(Some(a.clone()), args("<svg/>"), Some("c2"), 2.0)
                .unwrap_err()
                .message,
            gone
        );
        assert_eq!(
            update(Some(a.clone()), args("<div/>"), Some("c1"), 2.0)
                .unwrap_err()
                .message,
            "an svg artifact must start with an <svg> element"
        );
        assert_eq!(
            update(Some(a.clone()), args("<svg></svg>"), Some("c1"), 2.0)
                .unwrap_err()
                .message,
            "nothing changed: the source and title are the same as the current version"
        );

        let mut full = a.clone();
        full.versions = (0..MAX_VERSIONS)
            .map(|i| ArtifactVersion {
                source: format!("<svg>{i}</svg>"),
                created_ms: 1.0,
            })
            .collect();
        assert_eq!(
            update(Some(full), args("<svg>new</svg>"), Some("c1"), 2.0)
                .unwrap_err()
                .message,
            format!(
                "\"T\" already has {MAX_VERSIONS} versions, the most an artifact keeps; create a new artifact instead"
            )
        );

        let mut heavy = a;
        let chunk = format!("<svg>{}</svg>", "x".repeat(MAX_SOURCE_BYTES - 11));
        heavy.versions = (0..8)
            .map(|_| ArtifactVersion {
                source: chunk.clone(),
                created_ms: 1.0,
            })
            .collect();
        let refused = update(Some(heavy), args("<svg>y</svg>"), Some("c1"), 2.0)
            .unwrap_err()
            .message;
        assert!(
            refused.contains("over the limit of 4194304 bytes for all versions together"),
            "{refused}"
        );
    }

    #[test]
    fn file_names_follow_the_title_and_kind() {
        let mut a = made(ArtifactKind::Chart, CHART);
        a.title = "Sales by Month (2026)!".into();
        assert_eq!(a.file_name(), "sales-by-month-2026.json");
        a.title = "???".into();
        a.kind = ArtifactKind::Markdown;
        assert_eq!(a.file_name(), "artifact.md");
        let names: Vec<&str> = ArtifactKind::ALL.iter().map(|k| k.extension()).collect();
        assert_eq!(names, ["html", "svg", "md", "json"]);
    }

    #[test]
    fn the_diff_marks_added_and_removed_lines() {
        use DiffLine::*;
        assert_eq!(
            line_diff("a\nb\nc\nd", "a\nc\nx\nd"),
            vec![Same("a"), Removed("b"), Same("c"), Added("x"), Same("d")]
        );
        assert_eq!(line_diff("", "a"), vec![Added("a")]);
        assert_eq!(line_diff("a", ""), vec![Removed("a")]);
        assert_eq!(line_diff("a\nb", "a\nb"), vec![Same("a"), Same("b")]);
    }

    #[test]
    fn the_skills_register_in_the_core_tier() {
        for def in [create_definition(), update_definition()] {
            assert_eq!(def.tier, Tier::Core, "{}", def.id);
        }
    }
    #[test]
    fn every_preview_starts_with_its_policy() {
        let html = preview_document(
            ArtifactKind::Html,
            "T",
            "<!DOCTYPE html><p>x",
            PreviewInput::Source,
        )
        .unwrap();
        assert_eq!(
            html,
            format!(
                "<!DOCTYPE html><meta http-equiv=\"Content-Security-Policy\" content=\"{HTML_POLICY}\"><script>{HTML_PRELUDE}</script><p>x"
            )
        );
        let bare = preview_document(ArtifactKind::Html, "T", "<p>y", PreviewInput::Source).unwrap();
        assert!(bare.starts_with("<meta http-equiv"));
        assert!(bare.ends_with("</script><p>y"));
        let svg =
            preview_document(ArtifactKind::Svg, "a<b", "<svg/>", PreviewInput::Source).unwrap();
        assert!(svg.starts_with(&format!(
            "<!doctype html><meta http-equiv=\"Content-Security-Policy\" content=\"{STILL_POLICY}\"><title>a&lt;b</title>"
        )));
        let md = preview_document(
            ArtifactKind::Markdown,
            "T",
            "# x",
            PreviewInput::Rendered("<h1>x</h1>"),
        )
        .unwrap();
        assert!(md.contains("<body><h1>x</h1></body>"));
        assert!(md.contains(STILL_POLICY));
        // A kind without what it needs has no preview.
        assert_eq!(
            preview_document(ArtifactKind::Chart, "T", CHART, PreviewInput::Source),
            None
        );
        assert_eq!(
            preview_document(ArtifactKind::Markdown, "T", "# x", PreviewInput::Source),
            None
        );
    }

    #[test]
    fn a_chart_runs_only_the_library_and_its_drawing_script() {
        let library = "window.Chart=function(){};";
        let source = r#"{"type":"bar","data":{"datasets":[{"label":"</script><script>alert(1)</script>","data":[1]}]}}"#;
        let doc = preview_document(
            ArtifactKind::Chart,
            "T",
            source,
            PreviewInput::ChartLibrary(library),
        )
        .unwrap();
        let policy = format!(
            "script-src {} {};",
            script_hash(library),
            script_hash(CHART_SCRIPT)
        );
        assert!(doc.contains(&policy), "{doc}");
        assert!(
            !doc.contains("script-src 'unsafe-inline'"),
            "no other inline scripts"
        );
        // The label cannot close the configuration's element.
        assert_eq!(doc.matches("</script>").count(), 3, "{doc}");
        assert!(doc.contains("\\u003c/script>\\u003cscript>alert(1)"));
        // The published SHA-256 of "abc".
        assert_eq!(
            script_hash("abc"),
            "'sha256-ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0='"
        );
    }
    #[test]
    fn a_preview_holds_no_frame_elements() {
        assert_eq!(
            without_frames(
                "<p><IFRAME src=x></iframe><iframes><object data=y></Object><embed src=z><frameset><a>"
            ),
            "<p><x-inert-iframe src=x></x-inert-iframe><iframes><x-inert-object data=y></x-inert-object><x-inert-embed src=z><frameset><a>"
        );
        assert_eq!(without_frames("a < b <"), "a < b <");
        let doc = preview_document(
            ArtifactKind::Html,
            "T",
            "<script>document.body.innerHTML = '<iframe src=\"http://x/\">'</script>",
            PreviewInput::Source,
        )
        .unwrap();
        assert!(!doc.to_ascii_lowercase().contains("<iframe"), "{doc}");
    }
    #[test]
    fn the_schemas_hold_the_limits() {
        let create = create_definition().input_schema;
        assert_eq!(create["properties"]["title"]["maxLength"], json!(MAX_TITLE));
        assert_eq!(
            create["properties"]["source"]["maxLength"],
            json!(MAX_SOURCE_BYTES)
        );
        let kinds: Vec<&str> = ArtifactKind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(create["properties"]["kind"]["enum"], json!(kinds));
        let update = update_definition().input_schema;
        assert_eq!(update["properties"]["title"]["maxLength"], json!(MAX_TITLE));
        assert_eq!(
            update["properties"]["source"]["maxLength"],
            json!(MAX_SOURCE_BYTES)
        );
        assert_eq!(update["required"], json!(["id", "source"]));
        assert_eq!(create_definition().output_schema, schema(OUTPUT_SCHEMA));
    }
}
