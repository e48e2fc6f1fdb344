//! A small JSON Schema validator for skill inputs and outputs.
//!
//! It covers the subset tool schemas use in practice (types, properties,
//! required, additionalProperties, items, enum/const, numeric and length
//! bounds, anyOf/oneOf/allOf/not and local `$ref`s). Keywords outside that
//! subset are reported by [`check_schema`] when a skill is registered, so
//! nothing is ignored without the user being told. The full `jsonschema`
//! crate costs ~740 KB gzip in wasm, which is more than the whole app.

use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::fmt;

/// Keywords that only annotate; they never change whether a value is valid.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "$comment",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "format",
    "$defs",
    "definitions",
    "contentMediaType",
    "contentEncoding",
];

/// Keywords this validator checks.
const CHECKED: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "$ref",
];

/// A keyword in a schema that this validator will not check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaWarning {
    /// JSON Pointer to the schema object holding the keyword.
    pub at: String,
    pub keyword: String,
}

impl fmt::Display for SchemaWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.at.is_empty() { "/" } else { &self.at };
        write!(
            f,
            "schema keyword '{}' at {} is not supported and will not be checked",
            self.keyword, at
        )
    }
}

/// Lists every keyword in `schema` that [`validate`] does not check.
pub fn check_schema(schema: &Value) -> Vec<SchemaWarning> {
    let mut out = Vec::new();
    walk_schema(schema, String::new(), &mut out);
    out
}

fn walk_schema(schema: &Value, at: String, out: &mut Vec<SchemaWarning>) {
    let Some(obj) = schema.as_object() else {
        return;
    };
    for (key, value) in obj {
        let here = format!("{at}/{}", escape_pointer(key));
        match key.as_str() {
            "properties" | "$defs" | "definitions" => {
                if let Some(props) = value.as_object() {
                    for (name, sub) in props {
                        walk_schema(sub, format!("{here}/{}", escape_pointer(name)), out);
                    }
                }
            }
            "items" | "additionalProperties" | "not" => walk_schema(value, here, out),
            "anyOf" | "oneOf" | "allOf" => {
                if let Some(list) = value.as_array() {
                    for (i, sub) in list.iter().enumerate() {
                        walk_schema(sub, format!("{here}/{i}"), out);
                    }
                }
            }
            "$ref" => {
                if !value.as_str().is_some_and(|r| r.starts_with("#/")) {
                    out.push(SchemaWarning {
                        at: at.clone(),
                        keyword: "$ref (only local '#/...' references are supported)".into(),
                    });
                }
            }
            k if CHECKED.contains(&k) || ANNOTATIONS.contains(&k) => {}
            k if k.starts_with("x-") => {}
            k => out.push(SchemaWarning {
                at: at.clone(),
                keyword: k.to_string(),
            }),
        }
    }
}

/// Why a schema cannot be checked in bounded time: following its `$ref`s
/// and combinators from `at` comes back to `at` without reading any
/// further into the value, so checking would never end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unbounded {
    /// JSON Pointer to a schema object on the loop.
    pub at: String,
}

impl fmt::Display for Unbounded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.at.is_empty() { "/" } else { &self.at };
        write!(
            f,
            "the schema at {at} refers back to itself without reading further into the value, \
             so no input could be checked against it"
        )
    }
}

/// Refuses a schema that no validator could finish on: one whose `$ref`s,
/// `allOf`, `anyOf`, `oneOf` and `not` lead in a loop that never moves
/// into a property or an item. Every other schema [`validate`] checks in
/// time bounded by the input (see there).
pub fn check_bounded(schema: &Value) -> Result<(), Unbounded> {
    // Every schema object reachable from the root, each once, with the
    // first pointer it was found at.
    let mut nodes: Vec<(&Value, String)> = Vec::new();
    let mut index: HashMap<usize, usize> = HashMap::new();
    let mut queue = vec![(schema, String::new())];
    while let Some((node, at)) = queue.pop() {
        let id = node as *const Value as usize;
        if index.contains_key(&id) || !node.is_object() {
            continue;
        }
        index.insert(id, nodes.len());
        for (child, child_at, _) in edges(schema, node, &at) {
            queue.push((child, child_at));
        }
        nodes.push((node, at));
    }
    // A loop among the edges that read no further into the value.
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Closed,
    }
    let mut mark = vec![Mark::New; nodes.len()];
    for start in 0..nodes.len() {
        if mark[start] != Mark::New {
            continue;
        }
        // Depth first, without recursion: (node, its same-value children).
        let children = |i: usize| -> Vec<usize> {
            let (node, at) = &nodes[i];
            edges(schema, node, at)
                .into_iter()
                .filter(|(_, _, descends)| !descends)
                .filter_map(|(c, _, _)| index.get(&(c as *const Value as usize)).copied())
                .collect()
        };
        let mut stack = vec![(start, children(start), 0usize)];
        mark[start] = Mark::Open;
        while let Some((node, kids, next)) = stack.last_mut() {
            if let Some(&kid) = kids.get(*next) {
                *next += 1;
                match mark[kid] {
                    Mark::Open => {
                        return Err(Unbounded {
                            at: nodes[kid].1.clone(),
                        });
                    }
                    Mark::New => {
                        mark[kid] = Mark::Open;
                        let grand = children(kid);
                        stack.push((kid, grand, 0));
                    }
                    Mark::Closed => {}
                }
            } else {
                mark[*node] = Mark::Closed;
                stack.pop();
            }
        }
    }
    Ok(())
}

/// The schema objects `node` checks a value against: each with its
/// pointer and whether it applies to a part of the value (a property or an
/// item) rather than the value itself.
fn edges<'a>(root: &'a Value, node: &'a Value, at: &str) -> Vec<(&'a Value, String, bool)> {
    let mut out = Vec::new();
    let Some(obj) = node.as_object() else {
        return out;
    };
    for (key, value) in obj {
        let here = format!("{at}/{}", escape_pointer(key));
        match key.as_str() {
            "allOf" | "anyOf" | "oneOf" => {
                if let Some(list) = value.as_array() {
                    for (i, sub) in list.iter().enumerate() {
                        out.push((sub, format!("{here}/{i}"), false));
                    }
                }
            }
            "not" => out.push((value, here, false)),
            "$ref" => {
                if let Some(target) = value.as_str().and_then(|r| resolve_ref(root, r)) {
                    let pointer = value
                        .as_str()
                        .and_then(|r| r.strip_prefix('#'))
                        .unwrap_or_default()
                        .to_string();
                    out.push((target, pointer, false));
                }
            }
            "properties" => {
                if let Some(props) = value.as_object() {
                    for (name, sub) in props {
                        out.push((sub, format!("{here}/{}", escape_pointer(name)), true));
                    }
                }
            }
            "items" | "additionalProperties" => out.push((value, here, true)),
            _ => {}
        }
    }
    out
}

/// One way in which a value breaks its schema.
#[derive(Clone, Debug, PartialEq)]
pub struct ValidationError {
    /// JSON Pointer to the offending value; empty for the whole value.
    pub path: String,
    /// The schema keyword that failed.
    pub rule: &'static str,
    pub message: String,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let field = if self.path.is_empty() {
            "the input".to_string()
        } else {
            format!("'{}'", self.path.trim_start_matches('/'))
        };
        write!(f, "{field}: {} ({})", self.message, self.rule)
    }
}

/// Checks `value` against `schema`; an empty result means it is valid.
/// Errors come in document order, at most `MAX_ERRORS` of them.
///
/// It finishes in time bounded by the input's size whatever the schema:
/// each (schema, value) pair is checked once (a second visit reuses the
/// answer), and the whole check has a budget of steps that grows with the
/// input; a check that runs out fails, it never passes.
pub fn validate(schema: &Value, value: &Value) -> Vec<ValidationError> {
    let mut v = Validator {
        root: schema,
        errors: Vec::new(),
        depth: 0,
        steps: 0,
        budget: STEP_BASE + STEPS_PER_NODE.saturating_mul(count_nodes(value)),
        exhausted: false,
        probing: 0,
        failed: false,
        active: HashSet::new(),
        done: HashSet::new(),
        known: HashMap::new(),
    };
    v.check(schema, value, &mut String::new());
    if v.exhausted {
        v.errors.truncate(MAX_ERRORS - 1);
        v.errors.push(ValidationError {
            path: String::new(),
            rule: "budget",
            message: "could not be checked against its schema within Hearth's limits \
                      (the schema is too involved for an input of this size)"
                .into(),
        });
    }
    v.errors
}

const MAX_ERRORS: usize = 20;
const MAX_DEPTH: usize = 64;
/// Steps every check may take, whatever the input's size.
const STEP_BASE: u64 = 100_000;
/// Steps added for each value in the input.
const STEPS_PER_NODE: u64 = 32;

/// How many values `value` holds, itself included.
fn count_nodes(value: &Value) -> u64 {
    let mut n = 0u64;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        n += 1;
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
        }
    }
    n
}

/// A (schema, value) pair by address: both are borrowed for the whole
/// check, so an address names one place in each.
type Pair = (usize, usize);

fn pair(schema: &Value, value: &Value) -> Pair {
    (
        schema as *const Value as usize,
        value as *const Value as usize,
    )
}

struct Validator<'a> {
    root: &'a Value,
    errors: Vec<ValidationError>,
    depth: usize,
    steps: u64,
    budget: u64,
    /// The budget ran out: everything after fails.
    exhausted: bool,
    /// Inside `passes`: failures only mark the probe as failed.
    probing: u32,
    /// The current probe failed.
    failed: bool,
    /// Pairs being checked now: meeting one again is a loop that reads no
    /// further into the value, which fails.
    active: HashSet<Pair>,
    /// Pairs checked and reported outside any probe.
    done: HashSet<Pair>,
    /// Whether a pair passes, for probes.
    known: HashMap<Pair, bool>,
}

impl<'a> Validator<'a> {
    fn fail(&mut self, path: &str, rule: &'static str, message: String) {
        if self.probing > 0 {
            self.failed = true;
        } else if self.errors.len() < MAX_ERRORS {
            self.errors.push(ValidationError {
                path: path.to_string(),
                rule,
                message,
            });
        }
    }

    /// Spends `n` steps; false once the budget is gone.
    fn spend(&mut self, n: u64) -> bool {
        self.steps = self.steps.saturating_add(n);
        if self.steps > self.budget {
            self.exhausted = true;
            self.failed = true;
        }
        !self.exhausted
    }

    fn check(&mut self, schema: &'a Value, value: &Value, path: &mut String) {
        let obj = match schema {
            Value::Bool(true) => return,
            Value::Bool(false) => {
                self.fail(path, "false", "no value is allowed here".into());
                return;
            }
            Value::Object(o) => o,
            _ => return,
        };
        if !self.spend(1) {
            return;
        }
        let key = pair(schema, value);
        if self.active.contains(&key) {
            self.fail(
                path,
                "$ref",
                "the schema refers to itself here without reading further into the value".into(),
            );
            return;
        }
        if self.probing > 0 {
            if let Some(&ok) = self.known.get(&key) {
                if !ok {
                    self.failed = true;
                }
                return;
            }
            let outer = std::mem::replace(&mut self.failed, false);
            self.active.insert(key);
            self.check_here(obj, value, path);
            self.active.remove(&key);
            let ok = !self.failed;
            if !self.exhausted {
                self.known.insert(key, ok);
            }
            self.failed = outer || !ok;
        } else {
            // Outside probes a pair is checked once: a second visit (two
            // routes through `allOf`s and `$ref`s to the same place) would
            // report the same errors at the same path again.
            if !self.done.insert(key) {
                return;
            }
            self.active.insert(key);
            self.check_here(obj, value, path);
            self.active.remove(&key);
        }
    }

    fn check_here(&mut self, obj: &'a Map<String, Value>, value: &Value, path: &mut String) {
        if self.depth >= MAX_DEPTH {
            self.fail(path, "depth", "the value is nested too deeply".into());
            return;
        }
        self.depth += 1;
        self.check_object_schema(obj, value, path);
        self.depth -= 1;
    }

    /// Whether the probe can stop: it failed, or the budget is gone.
    fn settled(&self) -> bool {
        self.exhausted || (self.probing > 0 && self.failed)
    }

    fn check_object_schema(&mut self, s: &'a Map<String, Value>, value: &Value, path: &mut String) {
        if let Some(r) = s.get("$ref").and_then(Value::as_str)
            && let Some(target) = resolve_ref(self.root, r)
        {
            self.check(target, value, path);
        }
        if self.settled() {
            return;
        }
        if let Some(t) = s.get("type") {
            let ok = match t {
                Value::String(name) => type_matches(name, value),
                Value::Array(names) => names
                    .iter()
                    .filter_map(Value::as_str)
                    .any(|n| type_matches(n, value)),
                _ => true,
            };
            if !ok {
                let wanted = match t {
                    Value::Array(names) => names
                        .iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(" or "),
                    other => other.as_str().unwrap_or("?").to_string(),
                };
                self.fail(
                    path,
                    "type",
                    format!("expected {}, got {}", article(&wanted), describe(value)),
                );
                return;
            }
        }
        if let Some(options) = s.get("enum").and_then(Value::as_array)
            && self.spend(options.len() as u64)
            && !options.iter().any(|o| json_eq(o, value))
        {
            let list = options
                .iter()
                .map(|o| o.to_string())
                .collect::<Vec<_>>()
                .join(", ");
            self.fail(path, "enum", format!("must be one of {list}"));
        }
        if let Some(c) = s.get("const")
            && !json_eq(c, value)
        {
            self.fail(path, "const", format!("must be {c}"));
        }
        match value {
            Value::String(text) => self.check_string(s, text, path),
            Value::Number(_) => self.check_number(s, value, path),
            Value::Array(items) => self.check_array(s, items, path),
            Value::Object(map) => self.check_object(s, map, path),
            Value::Bool(_) | Value::Null => {}
        }
        if self.settled() {
            return;
        }
        if let Some(all) = s.get("allOf").and_then(Value::as_array) {
            for sub in all {
                self.check(sub, value, path);
                if self.settled() {
                    return;
                }
            }
        }
        if let Some(any) = s.get("anyOf").and_then(Value::as_array)
            && !any.iter().any(|sub| self.passes(sub, value))
        {
            self.fail(path, "anyOf", "matches none of the allowed shapes".into());
        }
        if self.settled() {
            return;
        }
        if let Some(one) = s.get("oneOf").and_then(Value::as_array) {
            let mut n = 0;
            for sub in one {
                if self.passes(sub, value) {
                    n += 1;
                }
                if self.exhausted {
                    return;
                }
            }
            if n != 1 {
                self.fail(
                    path,
                    "oneOf",
                    format!("must match exactly one allowed shape, matches {n}"),
                );
            }
        }
        if let Some(not) = s.get("not")
            && self.passes(not, value)
        {
            self.fail(path, "not", "matches a shape that is not allowed".into());
        }
    }

    /// Whether `value` matches `schema`, without reporting anything.
    fn passes(&mut self, schema: &'a Value, value: &Value) -> bool {
        let outer = std::mem::replace(&mut self.failed, false);
        self.probing += 1;
        self.check(schema, value, &mut String::new());
        self.probing -= 1;
        let ok = !self.failed && !self.exhausted;
        self.failed = outer;
        ok
    }

    fn check_string(&mut self, s: &Map<String, Value>, text: &str, path: &str) {
        let len = text.chars().count() as u64;
        if let Some(min) = s.get("minLength").and_then(Value::as_u64)
            && len < min
        {
            let message = if min == 1 {
                "must not be empty".to_string()
            } else {
                format!("must have at least {min} characters, has {len}")
            };
            self.fail(path, "minLength", message);
        }
        if let Some(max) = s.get("maxLength").and_then(Value::as_u64)
            && len > max
        {
            self.fail(
                path,
                "maxLength",
                format!("must have at most {max} characters, has {len}"),
            );
        }
    }

    fn check_number(&mut self, s: &Map<String, Value>, value: &Value, path: &str) {
        let Some(n) = value.as_f64() else { return };
        let bound = |k: &str| s.get(k).and_then(Value::as_f64);
        if let Some(min) = bound("minimum")
            && n < min
        {
            self.fail(path, "minimum", format!("must be at least {min}, is {n}"));
        }
        if let Some(max) = bound("maximum")
            && n > max
        {
            self.fail(path, "maximum", format!("must be at most {max}, is {n}"));
        }
        if let Some(min) = bound("exclusiveMinimum")
            && n <= min
        {
            self.fail(
                path,
                "exclusiveMinimum",
                format!("must be greater than {min}, is {n}"),
            );
        }
        if let Some(max) = bound("exclusiveMaximum")
            && n >= max
        {
            self.fail(
                path,
                "exclusiveMaximum",
                format!("must be less than {max}, is {n}"),
            );
        }
        if let Some(m) = bound("multipleOf")
            && m > 0.0
        {
            let q = n / m;
            if (q - q.round()).abs() > 1e-9 {
                self.fail(path, "multipleOf", format!("must be a multiple of {m}"));
            }
        }
    }

    fn check_array(&mut self, s: &'a Map<String, Value>, items: &[Value], path: &mut String) {
        let len = items.len() as u64;
        if let Some(min) = s.get("minItems").and_then(Value::as_u64)
            && len < min
        {
            self.fail(
                path,
                "minItems",
                format!("must have at least {min} items, has {len}"),
            );
        }
        if let Some(max) = s.get("maxItems").and_then(Value::as_u64)
            && len > max
        {
            self.fail(
                path,
                "maxItems",
                format!("must have at most {max} items, has {len}"),
            );
        }
        if s.get("uniqueItems").and_then(Value::as_bool) == Some(true) {
            'outer: for (i, a) in items.iter().enumerate() {
                if !self.spend((items.len() - i) as u64) {
                    return;
                }
                for b in &items[i + 1..] {
                    if json_eq(a, b) {
                        self.fail(path, "uniqueItems", "items must be unique".into());
                        break 'outer;
                    }
                }
            }
        }
        if let Some(item_schema) = s.get("items") {
            for (i, item) in items.iter().enumerate() {
                let len_before = path.len();
                path.push('/');
                path.push_str(&i.to_string());
                self.check(item_schema, item, path);
                path.truncate(len_before);
                if self.errors.len() >= MAX_ERRORS || self.settled() {
                    return;
                }
            }
        }
    }

    fn check_object(
        &mut self,
        s: &'a Map<String, Value>,
        map: &Map<String, Value>,
        path: &mut String,
    ) {
        if let Some(required) = s.get("required").and_then(Value::as_array) {
            for name in required.iter().filter_map(Value::as_str) {
                if !map.contains_key(name) {
                    let at = format!("{path}/{}", escape_pointer(name));
                    self.fail(&at, "required", "is required but missing".into());
                }
            }
        }
        let n = map.len() as u64;
        if let Some(min) = s.get("minProperties").and_then(Value::as_u64)
            && n < min
        {
            self.fail(
                path,
                "minProperties",
                format!("must have at least {min} fields"),
            );
        }
        if let Some(max) = s.get("maxProperties").and_then(Value::as_u64)
            && n > max
        {
            self.fail(
                path,
                "maxProperties",
                format!("must have at most {max} fields"),
            );
        }
        let props = s.get("properties").and_then(Value::as_object);
        let additional = s.get("additionalProperties");
        for (key, item) in map {
            let len_before = path.len();
            path.push('/');
            path.push_str(&escape_pointer(key));
            match props.and_then(|p| p.get(key)) {
                Some(sub) => self.check(sub, item, path),
                None => match additional {
                    Some(Value::Bool(false)) => {
                        let at = path.clone();
                        self.fail(
                            &at,
                            "additionalProperties",
                            "is not an allowed field".into(),
                        );
                    }
                    Some(sub @ Value::Object(_)) => self.check(sub, item, path),
                    _ => {}
                },
            }
            path.truncate(len_before);
            if self.errors.len() >= MAX_ERRORS || self.settled() {
                return;
            }
        }
    }
}

fn resolve_ref<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    root.pointer(pointer)
}

fn type_matches(name: &str, value: &Value) -> bool {
    match name {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => match value {
            Value::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    }
}

/// JSON equality where `1` and `1.0` are the same number.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn article(type_name: &str) -> String {
    match type_name {
        "object" | "array" | "integer" => format!("an {type_name}"),
        "null" => "null".into(),
        other if other.contains(" or ") => other.to_string(),
        other => format!("a {other}"),
    }
}

fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Validates `value` against `schema` and renders every error as a line.
    fn check(schema: Value, value: Value) -> Vec<String> {
        validate(&schema, &value)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    fn note_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "title": {"type": "string", "minLength": 1, "maxLength": 10},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
                "priority": {"enum": ["low", "high"]},
                "count": {"type": "integer", "minimum": 0}
            },
            "required": ["title"],
            "additionalProperties": false
        })
    }

    #[test]
    fn validation_errors_name_the_field_and_the_rule() {
        let cases: Vec<(Value, Vec<&str>)> = vec![
            (json!({"title": "ok"}), vec![]),
            (
                json!({}),
                vec!["'title': is required but missing (required)"],
            ),
            (
                json!({"title": 5}),
                vec!["'title': expected a string, got a number (type)"],
            ),
            (
                json!({"title": ""}),
                vec!["'title': must not be empty (minLength)"],
            ),
            (
                json!({"title": "ééééééééééé"}),
                vec!["'title': must have at most 10 characters, has 11 (maxLength)"],
            ),
            (
                json!({"title": "a", "tags": ["x", 1]}),
                vec!["'tags/1': expected a string, got a number (type)"],
            ),
            (
                json!({"title": "a", "tags": ["x", "y", "z"]}),
                vec!["'tags': must have at most 2 items, has 3 (maxItems)"],
            ),
            (
                json!({"title": "a", "priority": "mid"}),
                vec![r#"'priority': must be one of "low", "high" (enum)"#],
            ),
            (
                json!({"title": "a", "count": 1.5}),
                vec!["'count': expected an integer, got a number (type)"],
            ),
            (
                json!({"title": "a", "count": -1}),
                vec!["'count': must be at least 0, is -1 (minimum)"],
            ),
            (
                json!({"title": "a", "extra": true}),
                vec!["'extra': is not an allowed field (additionalProperties)"],
            ),
            (
                json!([1]),
                vec!["the input: expected an object, got an array (type)"],
            ),
        ];
        for (value, expected) in cases {
            assert_eq!(check(note_schema(), value.clone()), expected, "for {value}");
        }
    }

    #[test]
    fn combinators_and_local_refs() {
        let schema = json!({
            "$defs": {"pos": {"type": "integer", "minimum": 1}},
            "type": "object",
            "properties": {
                "n": {"$ref": "#/$defs/pos"},
                "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "one": {"oneOf": [{"type": "integer"}, {"type": "number"}]}
            }
        });
        assert_eq!(
            check(schema.clone(), json!({"n": 0})),
            vec!["'n': must be at least 1, is 0 (minimum)"]
        );
        assert_eq!(
            check(schema.clone(), json!({"maybe": null})),
            Vec::<String>::new()
        );
        assert_eq!(
            check(schema.clone(), json!({"maybe": 3})),
            vec!["'maybe': matches none of the allowed shapes (anyOf)"]
        );
        assert_eq!(
            check(schema, json!({"one": 2})),
            vec!["'one': must match exactly one allowed shape, matches 2 (oneOf)"]
        );
    }

    #[test]
    fn unsupported_keywords_are_reported_with_their_place() {
        let schema = json!({
            "type": "object",
            "properties": {"email": {"type": "string", "pattern": "@", "format": "email"}},
            "if": {"type": "object"},
            "x-ui": "ignored vendor extension"
        });
        let warnings: Vec<String> = check_schema(&schema)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            warnings,
            vec![
                "schema keyword 'pattern' at /properties/email is not supported and will not be checked",
                "schema keyword 'if' at / is not supported and will not be checked",
            ]
        );
    }

    #[test]
    fn deep_nesting_stops_with_an_error_not_a_stack_overflow() {
        // A schema that recurses through itself on every level.
        let schema = json!({"$defs": {"n": {"type": "array", "items": {"$ref": "#/$defs/n"}}}, "$ref": "#/$defs/n"});
        let mut value = json!([]);
        for _ in 0..100 {
            value = json!([value]);
        }
        let errors = validate(&schema, &value);
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].rule, "depth");
    }

    /// A value nested `depth` arrays deep.
    fn nested(depth: usize) -> Value {
        let mut value = json!([]);
        for _ in 0..depth {
            value = json!([value]);
        }
        value
    }

    #[test]
    fn self_references_under_combinators_cost_time_linear_in_the_input() {
        // Each level of the value is reached through eight references to
        // the same schema: without reusing answers the work grows eightfold
        // per level (8^15 checks here); with them it is one check per
        // level and reference.
        let refs: Vec<Value> = (0..8).map(|_| json!({"$ref": "#"})).collect();
        for combinator in ["allOf", "anyOf", "oneOf"] {
            let schema = json!({"type": "array", "items": {combinator: refs}});
            assert_eq!(check_bounded(&schema), Ok(()), "{combinator}");
            let errors = validate(&schema, &nested(15));
            // oneOf: all eight branches match, so it fails; the others pass.
            let failed = errors.iter().any(|e| e.rule == "oneOf");
            assert_eq!(failed, combinator == "oneOf", "{combinator}: {errors:?}");
            assert!(
                errors
                    .iter()
                    .all(|e| e.rule != "budget" && e.rule != "depth"),
                "{errors:?}"
            );
        }
        // A chain of definitions, each naming the next three times: 3^25
        // routes to the last one, which is checked once.
        let mut defs = serde_json::Map::new();
        for i in 0..25 {
            let next = json!({"$ref": format!("#/$defs/d{}", i + 1)});
            defs.insert(format!("d{i}"), json!({"anyOf": [next, next, next]}));
        }
        defs.insert("d25".into(), json!({"type": "string"}));
        let schema = json!({"$defs": defs, "$ref": "#/$defs/d0"});
        assert_eq!(check_bounded(&schema), Ok(()));
        assert_eq!(check(schema.clone(), json!("fine")), Vec::<String>::new());
        assert_eq!(
            check(schema, json!(5)),
            vec!["the input: matches none of the allowed shapes (anyOf)"]
        );
    }

    #[test]
    fn schemas_that_loop_without_reading_the_value_are_refused_and_never_pass() {
        let looping = [
            (json!({"$ref": "#"}), ""),
            (json!({"anyOf": [{"$ref": "#"}, {"type": "string"}]}), ""),
            (
                json!({"$defs": {"a": {"allOf": [{"$ref": "#/$defs/b"}]}, "b": {"not": {"$ref": "#/$defs/a"}}},
                       "properties": {"x": {"$ref": "#/$defs/a"}}}),
                "/$defs/a",
            ),
        ];
        for (schema, at) in looping {
            let refused = check_bounded(&schema).unwrap_err();
            assert!(
                refused.at == at || refused.at.starts_with("/$defs"),
                "{schema}: {refused:?}"
            );
            assert!(refused.to_string().contains("refers back to itself"));
        }
        // Validated anyway (a caller that skipped the check), the loop
        // fails instead of running forever or passing.
        assert_eq!(
            check(json!({"$ref": "#"}), json!(1)),
            vec![
                "the input: the schema refers to itself here without reading further into the value ($ref)"
            ]
        );
        // Recursion that reads into the value is fine.
        for ok in [
            json!({"type": "object", "properties": {"child": {"$ref": "#"}}}),
            json!({"type": "array", "items": {"$ref": "#"}}),
            json!({"additionalProperties": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}}),
        ] {
            assert_eq!(check_bounded(&ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn a_check_that_would_take_too_long_fails_it_never_passes() {
        // uniqueItems compares every pair: 200,000 items would take 2·10^10
        // comparisons. The budget grows with the input, but not that fast.
        let items: Vec<Value> = (0..200_000).map(|i| json!(i)).collect();
        let errors = validate(
            &json!({"type": "array", "uniqueItems": true}),
            &Value::Array(items),
        );
        assert_eq!(
            errors.iter().map(|e| e.rule).collect::<Vec<_>>(),
            vec!["budget"]
        );
        // An ordinary large input stays well inside it.
        let items: Vec<Value> = (0..50_000).map(|i| json!({"n": i})).collect();
        let schema = json!({"type": "array", "items": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}, "required": ["n"]}});
        assert_eq!(validate(&schema, &Value::Array(items)), vec![]);
    }
}
