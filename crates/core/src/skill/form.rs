//! Forms generated from a skill's input schema, for the no-model mode:
//! which fields to show (types, required, enums, defaults, descriptions),
//! and turning what the person typed back into the skill's arguments.
//!
//! The app only renders a [`Form`] and keeps a [`Values`] map of raw
//! inputs; everything that decides or converts lives here. The arguments
//! still go through the call path, so its schema validation and the
//! permission layer apply as for any other call.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

/// One choice of an enum field.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    pub value: Value,
    /// How the value reads in the list.
    pub label: String,
}

/// What kind of control a field needs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FieldKind {
    Text {
        /// Long text (bodies, code): a text area rather than a line.
        multiline: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min_length: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_length: Option<u64>,
        /// `uri`, `email`, `date`, … when the schema names one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        format: Option<String>,
    },
    Number {
        integer: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        minimum: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        maximum: Option<f64>,
    },
    Boolean,
    /// One of a fixed set of values (`enum`, `const`).
    Choice {
        options: Vec<Choice>,
    },
    /// An array of strings or numbers, typed one per line.
    List {
        numbers: bool,
    },
    /// Anything the controls above cannot express (objects, arrays of
    /// objects, `anyOf`, …), typed as JSON.
    Json,
}

/// One field of the form.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Field {
    /// The property name in the arguments.
    pub name: String,
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub required: bool,
    pub kind: FieldKind,
    /// The schema's default, if any; the field starts with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
}

/// The form for a skill.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Form {
    /// Required fields first, then the rest, each group in the schema's
    /// own order (for a form opened on typed arguments, the fields they
    /// fill come right after the required ones).
    pub fields: Vec<Field>,
    /// Arguments the form sets without a control: the chosen action.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub fixed: Map<String, Value>,
}

/// One thing a skill whose input starts with an `action` can be asked to
/// do, as its form offers it: the fields that action reads, in the order
/// the form shows them, and those it needs. Actions a person never picks
/// (the undo of a delete) are simply not listed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ActionForm {
    /// The `action` argument's value.
    pub value: String,
    /// How the choice reads: "Create a note".
    pub label: String,
    pub fields: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required: Vec<String>,
}

impl ActionForm {
    pub fn new(value: &str, label: &str, fields: &[&str], required: &[&str]) -> Self {
        Self {
            value: value.to_string(),
            label: label.to_string(),
            fields: fields.iter().map(|f| f.to_string()).collect(),
            required: required.iter().map(|f| f.to_string()).collect(),
        }
    }
}

/// The action `arguments` name among `actions`, else the first.
pub fn chosen_action<'a>(actions: &'a [ActionForm], arguments: &Value) -> Option<&'a ActionForm> {
    let named = arguments.get("action").and_then(Value::as_str);
    actions
        .iter()
        .find(|a| Some(a.value.as_str()) == named)
        .or(actions.first())
}

/// A skill's arguments as a person reads them: one (label, value) pair
/// per argument given, labelled as its form labels it; the action as the
/// words its form offers it with. Strings are shown bare, lists joined.
pub fn describe_arguments(
    schema: &Value,
    actions: &[ActionForm],
    arguments: &Value,
) -> Vec<(String, String)> {
    let Some(map) = arguments.as_object() else {
        return vec![(String::new(), arguments.to_string())];
    };
    let form = Form::from_schema(schema);
    let mut out = Vec::new();
    for (name, value) in map {
        if value.is_null() {
            continue;
        }
        if name == "action"
            && let Some(a) = actions
                .iter()
                .find(|a| Some(a.value.as_str()) == value.as_str())
        {
            out.push((String::new(), a.label.clone()));
            continue;
        }
        let label = form
            .field(name)
            .map(|f| f.label.clone())
            .unwrap_or_else(|| humanize(name));
        let text = match value {
            Value::String(s) => s.clone(),
            Value::Array(items) if items.iter().all(|i| !i.is_object() && !i.is_array()) => items
                .iter()
                .map(choice_label)
                .collect::<Vec<_>>()
                .join(", "),
            other => other.to_string(),
        };
        out.push((label, text));
    }
    out
}

/// What the person has entered in one field: text for every control but
/// the checkbox.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Input {
    Text(String),
    Checked(bool),
}

/// Raw inputs by field name.
pub type Values = BTreeMap<String, Input>;

/// A field whose input does not make a valid argument.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

/// Property names that usually hold long text.
const LONG_TEXT: &[&str] = &[
    "body", "content", "text", "code", "source", "script", "prompt", "markdown", "message",
];

/// `max_steps` → "Max steps"; `pageSize` → "Page size".
pub fn humanize(name: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if c == '_' || c == '-' || c == ' ' || c == '.' {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    let mut out = words.join(" ");
    if let Some(first) = out.chars().next() {
        let upper: String = first.to_uppercase().collect();
        out.replace_range(..first.len_utf8(), &upper);
    }
    out
}

/// The types a property schema allows, `null` aside.
fn types_of(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .collect(),
        _ => Vec::new(),
    }
}

fn choice_label(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "none".to_string(),
        other => other.to_string(),
    }
}

fn kind_of(name: &str, schema: &Value) -> FieldKind {
    let options = schema
        .get("enum")
        .and_then(Value::as_array)
        .cloned()
        .or_else(|| schema.get("const").map(|c| vec![c.clone()]));
    if let Some(options) = options {
        return FieldKind::Choice {
            options: options
                .into_iter()
                .map(|value| Choice {
                    label: choice_label(&value),
                    value,
                })
                .collect(),
        };
    }
    let types = types_of(schema);
    let num = |k: &str| schema.get(k).and_then(Value::as_f64);
    let uint = |k: &str| schema.get(k).and_then(Value::as_u64);
    match types.as_slice() {
        ["string"] => FieldKind::Text {
            multiline: LONG_TEXT.contains(&name.to_ascii_lowercase().as_str()),
            min_length: uint("minLength"),
            max_length: uint("maxLength"),
            format: schema
                .get("format")
                .and_then(Value::as_str)
                .map(str::to_string),
        },
        ["integer"] | ["number"] => FieldKind::Number {
            integer: types == ["integer"],
            minimum: num("minimum"),
            maximum: num("maximum"),
        },
        ["boolean"] => FieldKind::Boolean,
        ["array"] => {
            let items = schema.get("items").map(types_of).unwrap_or_default();
            let has_enum = schema.get("items").is_some_and(|i| i.get("enum").is_some());
            match items.as_slice() {
                ["string"] if !has_enum => FieldKind::List { numbers: false },
                ["number"] | ["integer"] if !has_enum => FieldKind::List { numbers: true },
                _ => FieldKind::Json,
            }
        }
        _ => FieldKind::Json,
    }
}

impl Form {
    /// The form for an input schema. A schema that is not an object with
    /// properties gives a form without fields.
    pub fn from_schema(schema: &Value) -> Form {
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let Some(props) = schema.get("properties").and_then(Value::as_object) else {
            return Form {
                fields: Vec::new(),
                fixed: Map::new(),
            };
        };
        let mut fields: Vec<Field> = props
            .iter()
            .map(|(name, prop)| Field {
                name: name.clone(),
                label: prop
                    .get("title")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| humanize(name)),
                description: prop
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                required: required.contains(&name.as_str()),
                kind: kind_of(name, prop),
                default: prop.get("default").cloned(),
            })
            .collect();
        // A stable sort keeps the schema's order inside each group (the
        // workspace's serde_json keeps object keys in written order).
        fields.sort_by_key(|f| !f.required);
        Form {
            fields,
            fixed: Map::new(),
        }
    }

    /// The form for one action of a skill: only the fields that action
    /// reads, in its order, required as it needs them; the action itself
    /// goes into the arguments without a control.
    pub fn for_action(schema: &Value, action: &ActionForm) -> Form {
        let all = Form::from_schema(schema);
        let fields = action
            .fields
            .iter()
            .filter_map(|name| all.field(name).cloned())
            .map(|mut f| {
                f.required = action.required.contains(&f.name);
                f
            })
            .collect();
        let mut fixed = Map::new();
        fixed.insert("action".into(), Value::String(action.value.clone()));
        Form { fields, fixed }
    }

    /// The form a skill opens with on `arguments`: the fields of the
    /// action they name (or its first) when the skill lists its actions,
    /// else every field of its schema.
    pub fn for_skill(schema: &Value, actions: &[ActionForm], arguments: &Value) -> Form {
        match chosen_action(actions, arguments) {
            Some(action) => Form::for_action(schema, action),
            None => Form::from_schema(schema),
        }
    }

    /// Whether every required field has an input that makes an argument:
    /// a form opened this way only waits to be confirmed.
    pub fn complete(&self, values: &Values) -> bool {
        self.fields
            .iter()
            .filter(|f| f.required)
            .all(|f| self.check(&f.name, values).is_none())
    }

    /// Gives the fields that have no input yet their starting one (after
    /// a switch to another action, whose fields were not on the form).
    pub fn fill_missing(&self, values: &mut Values) {
        for f in &self.fields {
            values
                .entry(f.name.clone())
                .or_insert_with(|| initial_input(f));
        }
    }

    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// The inputs a fresh form starts with: the defaults, as the controls
    /// show them.
    pub fn initial(&self) -> Values {
        self.fields
            .iter()
            .map(|f| (f.name.clone(), initial_input(f)))
            .collect()
    }

    /// The fields the arguments fill move up, right after the required
    /// ones: a form opened on `/note Buy milk` shows Title second, not
    /// after every optional field in name order.
    pub fn typed_first(mut self, arguments: &Value) -> Form {
        let given = |f: &Field| arguments.get(&f.name).is_some_and(|v| !v.is_null());
        // A stable sort keeps the schema's order inside each group.
        self.fields.sort_by_key(|f| (!f.required, !given(f)));
        self
    }

    /// The inputs a form starts with when it opens on arguments already
    /// known (what was typed in the composer): those arguments where a
    /// field takes them, the defaults elsewhere.
    pub fn prefilled(&self, arguments: &Value) -> Values {
        self.fields
            .iter()
            .map(|f| {
                let input = match arguments.get(&f.name) {
                    Some(v) if !v.is_null() => input_for(f, v),
                    _ => initial_input(f),
                };
                (f.name.clone(), input)
            })
            .collect()
    }

    /// The problem with one field's input, if it has one: what the form
    /// shows next to that field as the person types.
    pub fn check(&self, name: &str, values: &Values) -> Option<FieldError> {
        let field = self.field(name)?;
        let input = values
            .get(name)
            .cloned()
            .unwrap_or_else(|| initial_input(field));
        let message = match convert(field, &input) {
            Ok(Some(_)) => return None,
            Ok(None) if field.required => format!("{} is required", field.label),
            Ok(None) => return None,
            Err(message) => message,
        };
        Some(FieldError {
            field: name.to_string(),
            message,
        })
    }

    /// Turns the inputs into arguments: empty optional fields are left
    /// out; every problem is reported at once, by field.
    pub fn arguments(&self, values: &Values) -> Result<Value, Vec<FieldError>> {
        let mut out = self.fixed.clone();
        let mut errors = Vec::new();
        for field in &self.fields {
            let input = values
                .get(&field.name)
                .cloned()
                .unwrap_or_else(|| initial_input(field));
            match convert(field, &input) {
                Ok(Some(v)) => {
                    out.insert(field.name.clone(), v);
                }
                Ok(None) if field.required => errors.push(FieldError {
                    field: field.name.clone(),
                    message: format!("{} is required", field.label),
                }),
                Ok(None) => {}
                Err(message) => errors.push(FieldError {
                    field: field.name.clone(),
                    message,
                }),
            }
        }
        if errors.is_empty() {
            Ok(Value::Object(out))
        } else {
            Err(errors)
        }
    }
}

fn initial_input(field: &Field) -> Input {
    match &field.default {
        Some(default) => input_for(field, default),
        None => match field.kind {
            FieldKind::Boolean => Input::Checked(false),
            _ => Input::Text(String::new()),
        },
    }
}

/// A value as the field's control shows it.
fn input_for(field: &Field, value: &Value) -> Input {
    match (&field.kind, value) {
        (FieldKind::Boolean, Value::Bool(b)) => Input::Checked(*b),
        (FieldKind::Choice { options }, v) => Input::Text(
            options
                .iter()
                .position(|o| o.value == *v)
                .map(|i| i.to_string())
                .unwrap_or_default(),
        ),
        (FieldKind::List { .. }, Value::Array(items)) => Input::Text(
            items
                .iter()
                .map(choice_label)
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        (FieldKind::Json, v) => Input::Text(serde_json::to_string_pretty(v).unwrap_or_default()),
        (_, Value::String(s)) => Input::Text(s.clone()),
        (_, v) => Input::Text(v.to_string()),
    }
}

fn number(text: &str, integer: bool) -> Result<Value, String> {
    if integer {
        return text
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| format!("'{text}' is not a whole number"));
    }
    let n: f64 = text
        .parse()
        .map_err(|_| format!("'{text}' is not a number"))?;
    Number::from_f64(n)
        .map(Value::Number)
        .ok_or_else(|| format!("'{text}' is not a finite number"))
}

fn fmt_bound(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        n.to_string()
    }
}

/// One field's argument: `Ok(None)` when it is left empty.
fn convert(field: &Field, input: &Input) -> Result<Option<Value>, String> {
    let text = match input {
        Input::Checked(b) => {
            return match field.kind {
                FieldKind::Boolean => {
                    let default = field
                        .default
                        .as_ref()
                        .and_then(Value::as_bool)
                        .unwrap_or(false);
                    // An optional box left as it started says nothing.
                    if field.required || *b != default {
                        Ok(Some(Value::Bool(*b)))
                    } else {
                        Ok(None)
                    }
                }
                _ => Err(format!("{} takes text", field.label)),
            };
        }
        Input::Text(t) => t,
    };
    let trimmed = text.trim();
    match &field.kind {
        FieldKind::Text {
            min_length,
            max_length,
            ..
        } => {
            if text.is_empty() {
                return Ok(None);
            }
            let n = text.chars().count() as u64;
            if let Some(min) = min_length
                && n < *min
            {
                return Err(format!("{} needs at least {min} characters", field.label));
            }
            if let Some(max) = max_length
                && n > *max
            {
                return Err(format!(
                    "{} takes at most {max} characters ({n} now)",
                    field.label
                ));
            }
            Ok(Some(Value::String(text.clone())))
        }
        FieldKind::Number {
            integer,
            minimum,
            maximum,
        } => {
            if trimmed.is_empty() {
                return Ok(None);
            }
            let v = number(trimmed, *integer)?;
            let n = v.as_f64().unwrap_or(0.0);
            if let Some(min) = minimum
                && n < *min
            {
                return Err(format!(
                    "{} must be at least {}",
                    field.label,
                    fmt_bound(*min)
                ));
            }
            if let Some(max) = maximum
                && n > *max
            {
                return Err(format!(
                    "{} must be at most {}",
                    field.label,
                    fmt_bound(*max)
                ));
            }
            Ok(Some(v))
        }
        FieldKind::Boolean => match trimmed {
            "" => Ok(None),
            "true" => Ok(Some(Value::Bool(true))),
            "false" => Ok(Some(Value::Bool(false))),
            other => Err(format!("'{other}' is not true or false")),
        },
        FieldKind::Choice { options } => {
            if trimmed.is_empty() {
                return Ok(None);
            }
            trimmed
                .parse::<usize>()
                .ok()
                .and_then(|i| options.get(i))
                .map(|o| Some(o.value.clone()))
                .ok_or_else(|| format!("pick one of the choices for {}", field.label))
        }
        FieldKind::List { numbers } => {
            let items: Vec<&str> = text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            if items.is_empty() {
                return Ok(None);
            }
            let values = items
                .into_iter()
                .map(|item| {
                    if *numbers {
                        number(item, false)
                    } else {
                        Ok(Value::String(item.to_string()))
                    }
                })
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("{}: {e}", field.label))?;
            Ok(Some(Value::Array(values)))
        }
        FieldKind::Json => {
            if trimmed.is_empty() {
                return Ok(None);
            }
            serde_json::from_str(trimmed)
                .map(Some)
                .map_err(|e| format!("{} is not valid JSON: {e}", field.label))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(s: &str) -> Input {
        Input::Text(s.to_string())
    }

    fn values(pairs: &[(&str, Input)]) -> Values {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    #[test]
    fn labels_read_as_words() {
        let cases = [
            ("expression", "Expression"),
            ("max_steps", "Max steps"),
            ("pageSize", "Page size"),
            ("due-date", "Due date"),
            ("URL", "Url"),
            ("ids", "Ids"),
        ];
        for (name, want) in cases {
            assert_eq!(humanize(name), want, "{name}");
        }
    }

    #[test]
    fn the_calculator_gets_one_required_line() {
        let form = Form::from_schema(&crate::builtin::calculator().input_schema);
        assert_eq!(
            form,
            Form {
                fields: vec![Field {
                    name: "expression".into(),
                    label: "Expression".into(),
                    description: Some(
                        "The expression, e.g. '15% of 847' or '5 miles to km'".into()
                    ),
                    required: true,
                    kind: FieldKind::Text {
                        multiline: false,
                        min_length: Some(1),
                        max_length: Some(1000),
                        format: None,
                    },
                    default: None,
                }],
                fixed: Map::new(),
            }
        );
        assert_eq!(
            form.arguments(&values(&[("expression", text("15% of 847"))])),
            Ok(json!({"expression": "15% of 847"}))
        );
        assert_eq!(
            form.arguments(&form.initial()),
            Err(vec![FieldError {
                field: "expression".into(),
                message: "Expression is required".into()
            }])
        );
    }

    #[test]
    fn field_kinds_follow_the_schema() {
        let schema = json!({
            "type": "object",
            "properties": {
                "action": {"enum": ["create", "list"], "description": "What to do"},
                "body": {"type": "string"},
                "count": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3},
                "ratio": {"type": ["number", "null"]},
                "done": {"type": "boolean", "title": "Finished?"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "scores": {"type": "array", "items": {"type": "number"}},
                "notes": {"type": "array", "items": {"type": "object"}},
                "filter": {"type": "object"},
                "mode": {"const": "fast"},
                "url": {"type": "string", "format": "uri"}
            },
            "required": ["action", "url"]
        });
        let form = Form::from_schema(&schema);
        let kinds: Vec<(&str, bool, FieldKind)> = form
            .fields
            .iter()
            .map(|f| (f.name.as_str(), f.required, f.kind.clone()))
            .collect();
        let choice = |vals: &[&str]| FieldKind::Choice {
            options: vals
                .iter()
                .map(|v| Choice {
                    value: json!(v),
                    label: v.to_string(),
                })
                .collect(),
        };
        assert_eq!(
            kinds,
            vec![
                ("action", true, choice(&["create", "list"])),
                (
                    "url",
                    true,
                    FieldKind::Text {
                        multiline: false,
                        min_length: None,
                        max_length: None,
                        format: Some("uri".into())
                    }
                ),
                (
                    "body",
                    false,
                    FieldKind::Text {
                        multiline: true,
                        min_length: None,
                        max_length: None,
                        format: None
                    }
                ),
                (
                    "count",
                    false,
                    FieldKind::Number {
                        integer: true,
                        minimum: Some(1.0),
                        maximum: Some(10.0)
                    }
                ),
                (
                    "ratio",
                    false,
                    FieldKind::Number {
                        integer: false,
                        minimum: None,
                        maximum: None
                    }
                ),
                ("done", false, FieldKind::Boolean),
                ("tags", false, FieldKind::List { numbers: false }),
                ("scores", false, FieldKind::List { numbers: true }),
                ("notes", false, FieldKind::Json),
                ("filter", false, FieldKind::Json),
                ("mode", false, choice(&["fast"])),
            ]
        );
        assert_eq!(
            form.field("done").map(|f| f.label.as_str()),
            Some("Finished?")
        );
        let initial = form.initial();
        assert_eq!(initial.get("count"), Some(&text("3")));
        assert_eq!(initial.get("done"), Some(&Input::Checked(false)));
        assert_eq!(initial.get("action"), Some(&text("")));
    }

    #[test]
    fn inputs_become_typed_arguments() {
        let schema = json!({
            "type": "object",
            "properties": {
                "action": {"enum": ["create", "list"]},
                "count": {"type": "integer", "default": 3},
                "ratio": {"type": "number"},
                "done": {"type": "boolean"},
                "loud": {"type": "boolean", "default": true},
                "tags": {"type": "array", "items": {"type": "string"}},
                "filter": {"type": "object"},
                "title": {"type": "string"}
            },
            "required": ["action"]
        });
        let form = Form::from_schema(&schema);
        let mut v = form.initial();
        v.insert("action".into(), text("1"));
        v.insert("ratio".into(), text(" 0.25 "));
        v.insert("tags".into(), text("home\n\n  work \n"));
        v.insert("filter".into(), text("{\"a\": [1]}"));
        assert_eq!(
            form.arguments(&v),
            Ok(json!({
                "action": "list",
                "count": 3,
                "ratio": 0.25,
                "tags": ["home", "work"],
                "filter": {"a": [1]}
            }))
        );
        // Unticking a box whose default is true says false; ticking says true.
        v.insert("loud".into(), Input::Checked(false));
        v.insert("done".into(), Input::Checked(true));
        v.insert("count".into(), text(""));
        let args = form.arguments(&v).unwrap();
        assert_eq!(args.get("loud"), Some(&json!(false)));
        assert_eq!(args.get("done"), Some(&json!(true)));
        assert_eq!(args.get("count"), None);
    }

    #[test]
    fn bad_inputs_are_reported_by_field() {
        let schema = json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "minimum": 1, "maximum": 100},
                "x": {"type": "number"},
                "name": {"type": "string", "minLength": 2, "maxLength": 5},
                "filter": {"type": "object"},
                "scores": {"type": "array", "items": {"type": "number"}},
                "kind": {"enum": ["a", "b"]}
            },
            "required": ["kind"]
        });
        let form = Form::from_schema(&schema);
        let cases: Vec<(&str, &str, &str)> = vec![
            ("n", "2.5", "'2.5' is not a whole number"),
            ("n", "0", "N must be at least 1"),
            ("n", "101", "N must be at most 100"),
            ("x", "abc", "'abc' is not a number"),
            ("name", "a", "Name needs at least 2 characters"),
            ("name", "abcdef", "Name takes at most 5 characters (6 now)"),
            (
                "filter",
                "{oops",
                "Filter is not valid JSON: key must be a string at line 1 column 2",
            ),
            ("scores", "1\nx", "Scores: 'x' is not a number"),
            ("kind", "7", "pick one of the choices for Kind"),
        ];
        for (field, input, want) in cases {
            let mut v = form.initial();
            v.insert("kind".into(), text("0"));
            v.insert(field.into(), text(input));
            assert_eq!(
                form.arguments(&v),
                Err(vec![FieldError {
                    field: field.into(),
                    message: want.into()
                }]),
                "{field} = {input:?}"
            );
        }
    }

    #[test]
    fn every_builtin_schema_makes_a_form() {
        for skill in crate::builtin::definitions() {
            let form = Form::from_schema(&skill.input_schema);
            let required: Vec<&str> = skill
                .input_schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let shown: Vec<&str> = form
                .fields
                .iter()
                .filter(|f| f.required)
                .map(|f| f.name.as_str())
                .collect();
            // The required ones come first, in the schema's own order.
            let order: Vec<&str> = skill
                .input_schema
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().map(String::as_str).collect())
                .unwrap_or_default();
            let want: Vec<&str> = order
                .iter()
                .copied()
                .filter(|n| required.contains(n))
                .collect();
            assert_eq!(shown, want, "{}", skill.id);
            assert_eq!(
                form.fields
                    .iter()
                    .take(shown.len())
                    .filter(|f| f.required)
                    .count(),
                shown.len(),
                "{}",
                skill.id
            );
        }
    }

    #[test]
    fn a_form_opened_on_typed_arguments_shows_them_and_gives_them_back() {
        let form = Form::from_schema(&crate::builtin::notes::definition().input_schema);
        let typed = json!({"action": "create", "title": "Groceries", "tags": ["home", "food"]});
        let values = form.prefilled(&typed);
        assert_eq!(values.get("title"), Some(&Input::Text("Groceries".into())));
        assert_eq!(values.get("tags"), Some(&Input::Text("home\nfood".into())));
        assert_eq!(form.arguments(&values), Ok(typed.clone()));
        // Nothing typed: the same as a fresh form.
        assert_eq!(form.prefilled(&json!({})), form.initial());
        // What was typed comes right after the required fields.
        let names: Vec<String> = form
            .typed_first(&typed)
            .fields
            .into_iter()
            .map(|f| f.name)
            .take(3)
            .collect();
        assert_eq!(names, ["action", "title", "tags"]);
    }

    #[test]
    fn required_fields_come_first_then_the_schemas_own_order() {
        let schema = json!({
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "body": {"type": "string"},
                "due": {"type": "string"},
                "action": {"enum": ["create"]},
                "priority": {"enum": ["low", "high"]},
                "id": {"type": "string"}
            },
            "required": ["id", "action"]
        });
        let names: Vec<String> = Form::from_schema(&schema)
            .fields
            .into_iter()
            .map(|f| f.name)
            .collect();
        assert_eq!(names, ["action", "id", "title", "body", "due", "priority"]);
        // The Notes form reads title, body, tags — not body, id, ids, ….
        let notes: Vec<String> =
            Form::from_schema(&crate::builtin::notes::definition().input_schema)
                .fields
                .into_iter()
                .map(|f| f.name)
                .collect();
        assert_eq!(
            notes,
            [
                "action", "id", "ids", "title", "body", "tags", "tag", "query", "limit", "notes"
            ]
        );
    }

    #[test]
    fn one_field_is_checked_as_it_is_typed() {
        let schema = json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "minimum": 1, "maximum": 100},
                "kind": {"enum": ["a", "b"]},
                "note": {"type": "string"}
            },
            "required": ["kind"]
        });
        let form = Form::from_schema(&schema);
        let with = |field: &str, input: &str| {
            let mut v = form.initial();
            v.insert(field.into(), text(input));
            form.check(field, &v).map(|e| e.message)
        };
        assert_eq!(with("n", "500").as_deref(), Some("N must be at most 100"));
        assert_eq!(
            with("n", "2.5").as_deref(),
            Some("'2.5' is not a whole number")
        );
        assert_eq!(with("n", "50"), None);
        assert_eq!(with("n", ""), None, "an optional field may stay empty");
        assert_eq!(with("kind", "").as_deref(), Some("Kind is required"));
        assert_eq!(with("kind", "1"), None);
        // Another field's problem is not this field's.
        let mut v = form.initial();
        v.insert("n".into(), text("0"));
        assert_eq!(form.check("note", &v), None);
        assert_eq!(form.check("nothing-like-this", &v), None);
    }

    #[test]
    fn a_schema_without_properties_has_no_fields() {
        assert_eq!(
            Form::from_schema(&json!({})),
            Form {
                fields: vec![],
                fixed: Map::new()
            }
        );
        assert_eq!(
            Form::from_schema(&json!({"type": "object"})).arguments(&Values::new()),
            Ok(json!({}))
        );
    }
}
