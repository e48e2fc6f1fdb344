//! The HTTP headers MCP mirrors from request bodies (2026-07-28, SEP-2243):
//! `Mcp-Method`, `Mcp-Name`, and the `Mcp-Param-{Name}` headers a tool asks
//! for with `x-mcp-header` in its input schema — including the validity
//! rules for those annotations and the Base64 sentinel encoding of values
//! that are not plain ASCII.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

pub const PROTOCOL_VERSION: &str = "MCP-Protocol-Version";
pub const METHOD: &str = "Mcp-Method";
pub const NAME: &str = "Mcp-Name";
pub const SESSION_ID: &str = "Mcp-Session-Id";
pub const PARAM_PREFIX: &str = "Mcp-Param-";
pub const LAST_EVENT_ID: &str = "Last-Event-ID";

const SENTINEL_START: &str = "=?base64?";
const SENTINEL_END: &str = "?=";

/// Encodes a value for `Mcp-Name` or `Mcp-Param-*`: as-is when it is plain
/// visible ASCII without surrounding whitespace, otherwise in the Base64
/// sentinel form. A plain value that looks like the sentinel is encoded
/// too, so it cannot be misread.
pub fn encode_value(value: &str) -> String {
    let visible_ascii = value.bytes().all(|b| (0x20..=0x7e).contains(&b));
    let padded = value.starts_with(' ') || value.ends_with(' ');
    let looks_encoded = value.starts_with(SENTINEL_START) && value.ends_with(SENTINEL_END);
    let plain = visible_ascii && !padded && !looks_encoded;
    if plain {
        value.to_string()
    } else {
        format!("{SENTINEL_START}{}{SENTINEL_END}", STANDARD.encode(value))
    }
}

/// The request's source value for `Mcp-Name`, when the method has one.
pub fn name_source<'a>(method: &str, params: &'a Value) -> Option<&'a str> {
    match method {
        "tools/call" | "prompts/get" => params.get("name").and_then(Value::as_str),
        "resources/read" => params.get("uri").and_then(Value::as_str),
        _ => None,
    }
}

/// One `x-mcp-header` annotation: the header's name part and the chain of
/// `properties` keys leading to the annotated parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamHeader {
    pub name: String,
    pub path: Vec<String>,
}

/// Why a tool's `x-mcp-header` annotations make it unusable.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParamHeaderError {
    #[error("an x-mcp-header value at {at} is not a string")]
    NotAString { at: String },
    #[error("the x-mcp-header at {at} is empty")]
    Empty { at: String },
    #[error("the x-mcp-header {name:?} at {at} is not a valid HTTP header name")]
    BadName { at: String, name: String },
    #[error("the x-mcp-header {name:?} is used more than once (names ignore case)")]
    Duplicate { name: String },
    #[error(
        "the x-mcp-header {name:?} at {at} is on a parameter that is not a string, integer or boolean"
    )]
    NotPrimitive { at: String, name: String },
    #[error("the x-mcp-header at {at} is not reachable through properties alone")]
    NotStatic { at: String },
}

/// Finds a tool's `x-mcp-header` annotations and checks every rule. Any
/// violation makes the whole tool invalid, as the spec requires.
pub fn param_headers(schema: &Value) -> Result<Vec<ParamHeader>, ParamHeaderError> {
    let mut found = Vec::new();
    walk(schema, Some(Vec::new()), String::new(), &mut found)?;
    let mut seen: Vec<String> = Vec::new();
    for h in &found {
        let lower = h.name.to_ascii_lowercase();
        if seen.contains(&lower) {
            return Err(ParamHeaderError::Duplicate {
                name: h.name.clone(),
            });
        }
        seen.push(lower);
    }
    Ok(found)
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn walk(
    schema: &Value,
    path: Option<Vec<String>>,
    at: String,
    found: &mut Vec<ParamHeader>,
) -> Result<(), ParamHeaderError> {
    let Some(obj) = schema.as_object() else {
        return Ok(());
    };
    if let Some(annotation) = obj.get("x-mcp-header") {
        let here = if at.is_empty() {
            "/".into()
        } else {
            at.clone()
        };
        let name = annotation
            .as_str()
            .ok_or_else(|| ParamHeaderError::NotAString { at: here.clone() })?;
        if name.is_empty() {
            return Err(ParamHeaderError::Empty { at: here });
        }
        if !name.bytes().all(is_tchar) {
            return Err(ParamHeaderError::BadName {
                at: here,
                name: name.into(),
            });
        }
        let path = match &path {
            Some(p) if !p.is_empty() => p.clone(),
            _ => return Err(ParamHeaderError::NotStatic { at: here }),
        };
        let primitive = matches!(
            obj.get("type").and_then(Value::as_str),
            Some("string" | "integer" | "boolean")
        );
        if !primitive {
            return Err(ParamHeaderError::NotPrimitive {
                at: here,
                name: name.into(),
            });
        }
        found.push(ParamHeader {
            name: name.into(),
            path,
        });
    }
    for (key, value) in obj {
        let child_at = format!("{at}/{key}");
        match key.as_str() {
            "properties" => {
                if let Some(props) = value.as_object() {
                    for (name, sub) in props {
                        let sub_path = path.as_ref().map(|p| {
                            let mut p = p.clone();
                            p.push(name.clone());
                            p
                        });
                        walk(sub, sub_path, format!("{child_at}/{name}"), found)?;
                    }
                }
            }
            "$defs" | "definitions" | "patternProperties" | "dependentSchemas" => {
                if let Some(map) = value.as_object() {
                    for (name, sub) in map {
                        walk(sub, None, format!("{child_at}/{name}"), found)?;
                    }
                }
            }
            "anyOf" | "oneOf" | "allOf" | "prefixItems" | "items" => match value {
                Value::Array(list) => {
                    for (i, sub) in list.iter().enumerate() {
                        walk(sub, None, format!("{child_at}/{i}"), found)?;
                    }
                }
                other => walk(other, None, child_at, found)?,
            },
            "additionalProperties"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames"
            | "unevaluatedItems"
            | "unevaluatedProperties"
            | "additionalItems" => walk(value, None, child_at, found)?,
            _ => {}
        }
    }
    Ok(())
}

/// The `Mcp-Param-*` headers for one call: each annotated parameter present
/// in `arguments` with a primitive value, encoded. Absent and `null` values
/// send no header.
pub fn param_header_values(headers: &[ParamHeader], arguments: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for h in headers {
        let mut v = arguments;
        let mut present = true;
        for key in &h.path {
            match v.get(key) {
                Some(next) => v = next,
                None => {
                    present = false;
                    break;
                }
            }
        }
        if !present {
            continue;
        }
        let text = match v {
            Value::String(s) => s.clone(),
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => i.to_string(),
                (None, Some(f)) if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 => {
                    format!("{}", f as i64)
                }
                _ => n.to_string(),
            },
            Value::Null | Value::Array(_) | Value::Object(_) => continue,
        };
        out.push((format!("{PARAM_PREFIX}{}", h.name), encode_value(&text)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_are_encoded_per_the_spec_table() {
        let table = [
            ("us-west1", "us-west1"),
            ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
            (" padded ", "=?base64?IHBhZGRlZCA=?="),
            ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
            ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
            ("us west 1", "us west 1"),
            ("\tindented", "=?base64?CWluZGVudGVk?="),
            ("", ""),
            ("my-hyphenated-tool", "my-hyphenated-tool"),
        ];
        for (input, want) in table {
            assert_eq!(encode_value(input), want, "input: {input:?}");
        }
    }

    #[test]
    fn annotations_are_found_along_properties_chains() {
        let schema = json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "n": {"type": "integer", "x-mcp-header": "Priority"},
                "nested": {"type": "object", "properties": {
                    "flag": {"type": "boolean", "x-mcp-header": "Flag"}
                }},
                "plain": {"type": "number"}
            }
        });
        let mut got = param_headers(&schema).unwrap();
        got.sort_by(|a, b| a.name.cmp(&b.name));
        assert_eq!(
            got,
            vec![
                ParamHeader {
                    name: "Flag".into(),
                    path: vec!["nested".into(), "flag".into()]
                },
                ParamHeader {
                    name: "Priority".into(),
                    path: vec!["n".into()]
                },
                ParamHeader {
                    name: "Region".into(),
                    path: vec!["region".into()]
                },
            ]
        );
        let args =
            json!({"region": "Hello, 世界", "n": 42, "nested": {"flag": false}, "plain": 3.5});
        let mut values = param_header_values(&got, &args);
        values.sort();
        assert_eq!(
            values,
            vec![
                ("Mcp-Param-Flag".to_string(), "false".to_string()),
                ("Mcp-Param-Priority".to_string(), "42".to_string()),
                (
                    "Mcp-Param-Region".to_string(),
                    "=?base64?SGVsbG8sIOS4lueVjA==?=".to_string()
                ),
            ]
        );
        assert_eq!(
            param_header_values(&got, &json!({"region": null, "nested": {}})),
            Vec::<(String, String)>::new()
        );
    }

    #[test]
    fn invalid_annotations_invalidate_the_tool() {
        let prop = |p: Value| json!({"type": "object", "properties": p});
        let table: Vec<(Value, ParamHeaderError)> = vec![
            (
                prop(json!({"a": {"type": "string", "x-mcp-header": ""}})),
                ParamHeaderError::Empty {
                    at: "/properties/a".into(),
                },
            ),
            (
                prop(json!({"a": {"type": "object", "x-mcp-header": "A"}})),
                ParamHeaderError::NotPrimitive {
                    at: "/properties/a".into(),
                    name: "A".into(),
                },
            ),
            (
                prop(json!({"a": {"type": "number", "x-mcp-header": "A"}})),
                ParamHeaderError::NotPrimitive {
                    at: "/properties/a".into(),
                    name: "A".into(),
                },
            ),
            (
                prop(json!({"a": {"type": "null", "x-mcp-header": "A"}})),
                ParamHeaderError::NotPrimitive {
                    at: "/properties/a".into(),
                    name: "A".into(),
                },
            ),
            (
                prop(json!({
                    "a": {"type": "string", "x-mcp-header": "Dup"},
                    "b": {"type": "string", "x-mcp-header": "dup"}
                })),
                ParamHeaderError::Duplicate { name: "dup".into() },
            ),
            (
                prop(json!({"a": {"type": "string", "x-mcp-header": "Has Space"}})),
                ParamHeaderError::BadName {
                    at: "/properties/a".into(),
                    name: "Has Space".into(),
                },
            ),
            (
                prop(json!({"a": {"type": "string", "x-mcp-header": "A:B"}})),
                ParamHeaderError::BadName {
                    at: "/properties/a".into(),
                    name: "A:B".into(),
                },
            ),
            (
                prop(json!({"a": {"type": "string", "x-mcp-header": "Région"}})),
                ParamHeaderError::BadName {
                    at: "/properties/a".into(),
                    name: "Région".into(),
                },
            ),
            (
                prop(json!({"a": {"type": "string", "x-mcp-header": "A\r\nB"}})),
                ParamHeaderError::BadName {
                    at: "/properties/a".into(),
                    name: "A\r\nB".into(),
                },
            ),
            (
                prop(
                    json!({"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "I"}}}),
                ),
                ParamHeaderError::NotStatic {
                    at: "/properties/a/items".into(),
                },
            ),
            (
                json!({"type": "object", "anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}),
                ParamHeaderError::NotStatic {
                    at: "/anyOf/0/properties/a".into(),
                },
            ),
            (
                prop(json!({"a": {"type": "string", "x-mcp-header": 5}})),
                ParamHeaderError::NotAString {
                    at: "/properties/a".into(),
                },
            ),
        ];
        for (schema, want) in table {
            assert_eq!(param_headers(&schema), Err(want), "schema: {schema}");
        }
    }

    #[test]
    fn a_property_named_like_the_keyword_is_not_an_annotation() {
        let schema = json!({"type": "object", "properties": {"x-mcp-header": {"type": "string"}}});
        assert_eq!(param_headers(&schema), Ok(vec![]));
    }
}
