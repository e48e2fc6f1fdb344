//! A small JSON Schema validator for skill inputs and outputs.
//!
//! It covers the subset tool schemas use in practice (types, properties,
//! required, additionalProperties, items, enum/const, numeric and length
//! bounds, anyOf/oneOf/allOf/not and local `$ref`s). Keywords outside that
//! subset are reported by [`check_schema`] when a skill is registered, so
//! nothing is ignored without the user being told. The full `jsonschema`
//! crate costs ~740 KB gzip in wasm, which is more than the whole app.

use serde_json::{Map, Value};
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
pub fn validate(schema: &Value, value: &Value) -> Vec<ValidationError> {
    let mut v = Validator {
        root: schema,
        errors: Vec::new(),
        depth: 0,
    };
    v.check(schema, value, &mut String::new());
    v.errors
}

const MAX_ERRORS: usize = 20;
const MAX_DEPTH: usize = 64;

struct Validator<'a> {
    root: &'a Value,
    errors: Vec<ValidationError>,
    depth: usize,
}

impl<'a> Validator<'a> {
    fn fail(&mut self, path: &str, rule: &'static str, message: String) {
        if self.errors.len() < MAX_ERRORS {
            self.errors.push(ValidationError {
                path: path.to_string(),
                rule,
                message,
            });
        }
    }

    fn check(&mut self, schema: &'a Value, value: &Value, path: &mut String) {
        let schema = match schema {
            Value::Bool(true) => return,
            Value::Bool(false) => {
                self.fail(path, "false", "no value is allowed here".into());
                return;
            }
            Value::Object(o) => o,
            _ => return,
        };
        if self.depth >= MAX_DEPTH {
            self.fail(path, "depth", "the value is nested too deeply".into());
            return;
        }
        self.depth += 1;
        self.check_object_schema(schema, value, path);
        self.depth -= 1;
    }

    fn check_object_schema(&mut self, s: &'a Map<String, Value>, value: &Value, path: &mut String) {
        if let Some(r) = s.get("$ref").and_then(Value::as_str)
            && let Some(target) = resolve_ref(self.root, r)
        {
            self.check(target, value, path);
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
        if let Some(all) = s.get("allOf").and_then(Value::as_array) {
            for sub in all {
                self.check(sub, value, path);
            }
        }
        if let Some(any) = s.get("anyOf").and_then(Value::as_array)
            && !any.iter().any(|sub| self.passes(sub, value))
        {
            self.fail(path, "anyOf", "matches none of the allowed shapes".into());
        }
        if let Some(one) = s.get("oneOf").and_then(Value::as_array) {
            let n = one.iter().filter(|sub| self.passes(sub, value)).count();
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

    fn passes(&mut self, schema: &'a Value, value: &Value) -> bool {
        let mut probe = Validator {
            root: self.root,
            errors: Vec::new(),
            depth: self.depth,
        };
        probe.check(schema, value, &mut String::new());
        probe.errors.is_empty()
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
                if self.errors.len() >= MAX_ERRORS {
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
            if self.errors.len() >= MAX_ERRORS {
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
}
