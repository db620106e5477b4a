//! The JSON Schemas of typed capabilities: checking an argument against
//! one, and writing one as a Lua-flavoured type for a model to read.
//!
//! The checker covers the keywords that describe a value's shape, which is
//! what schemars derives and what MCP tools declare: `type`, `enum`,
//! `const`, `properties`, `required`, `additionalProperties`, `items`,
//! `prefixItems`, `minItems`, `maxItems`, `minLength`, `maxLength`,
//! `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `anyOf`,
//! `oneOf` (as "at least one"), `allOf`, `not`, and local `$ref`s
//! (`#/$defs/...`, `#/definitions/...`). Other keywords (`pattern`,
//! `format`, ...) are not checked: the handler still sees the value and may
//! refuse it.

use std::cell::Cell;

use serde_json::{Map, Value};

/// How deep a check or a rendering follows nested schemas and `$ref`s;
/// deeper parts are accepted (checking) or written `table` (rendering), so
/// a recursive or hostile schema cannot loop.
const MAX_DEPTH: usize = 48;

/// The longest type text rendered for one argument or result.
const MAX_RENDERED: usize = 300;

/// The most schema nodes one check visits. A value's size bounds the work
/// of an honest schema; this bounds what `anyOf`/`allOf` over shared
/// `$ref`s could multiply it into.
const MAX_STEPS: usize = 200_000;

/// The most schema nodes one rendering visits.
const MAX_RENDER_STEPS: usize = 2_000;

/// Checks `value` against `schema`; the error says where and what was
/// expected, as ``.visits[2].date must be a string (got integer `3`)``.
pub(crate) fn check(schema: &Value, value: &Value) -> Result<(), String> {
    let checker = Checker {
        root: schema,
        steps: Cell::new(0),
    };
    let result = checker.check(schema, value, "", 0);
    if checker.steps.get() > MAX_STEPS {
        return Err(format!(
            "is too large, or its schema too complex, to check here (more than {MAX_STEPS} steps); pass less data"
        ));
    }
    result
}

struct Checker<'a> {
    root: &'a Value,
    /// Schema nodes visited so far; past [`MAX_STEPS`] every check fails.
    steps: Cell<usize>,
}

impl<'a> Checker<'a> {
    fn resolve(&self, reference: &str) -> Option<&'a Value> {
        resolve(self.root, reference)
    }

    /// Whether a schema's declared type (after one `$ref`) admits the
    /// value's type; a schema without a type admits any.
    fn admits(&self, schema: &Value, value: &Value) -> bool {
        let schema = match schema.get("$ref").and_then(Value::as_str) {
            Some(reference) => self.resolve(reference).unwrap_or(schema),
            None => schema,
        };
        match schema.get("type") {
            Some(Value::String(t)) => is_type(value, t),
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .any(|t| is_type(value, t)),
            _ => true,
        }
    }

    fn check(&self, schema: &Value, value: &Value, path: &str, depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Ok(());
        }
        let steps = self.steps.get() + 1;
        self.steps.set(steps);
        if steps > MAX_STEPS {
            return Err("stopped".to_owned());
        }
        let at = |what: &str| at(path, what);
        let original = schema;
        let schema = match schema {
            Value::Bool(true) => return Ok(()),
            Value::Bool(false) => return Err(at("is not allowed here")),
            Value::Object(s) => s,
            _ => return Ok(()),
        };
        // The empty Lua table crosses as `[]`; where only an object fits,
        // check it as the empty object, so that `required` still holds.
        if matches!(value, Value::Array(items) if items.is_empty()) && wants_object_only(schema) {
            return self.check(original, &Value::Object(Map::new()), path, depth);
        }
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str)
            && let Some(target) = self.resolve(reference)
        {
            self.check(target, value, path, depth + 1)?;
        }
        if let Some(types) = schema.get("type") {
            let allowed: Vec<&str> = match types {
                Value::String(t) => vec![t.as_str()],
                Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            if !allowed.is_empty() && !allowed.iter().any(|t| is_type(value, t)) {
                return Err(at(&format!(
                    "must be {} (got {})",
                    allowed
                        .iter()
                        .map(|t| article(t))
                        .collect::<Vec<_>>()
                        .join(" or "),
                    describe(value)
                )));
            }
        }
        if let Some(Value::Array(options)) = schema.get("enum")
            && !options.iter().any(|o| same(o, value))
        {
            return Err(at(&format!(
                "must be one of {} (got {})",
                short(&Value::Array(options.clone())),
                describe(value)
            )));
        }
        if let Some(expected) = schema.get("const")
            && !same(expected, value)
        {
            return Err(at(&format!(
                "must be {} (got {})",
                short(expected),
                describe(value)
            )));
        }
        match value {
            Value::Object(members) => self.check_object(schema, members, path, depth)?,
            Value::Array(items) => self.check_array(schema, items, path, depth)?,
            Value::String(s) => {
                let chars = s.chars().count() as u64;
                if let Some(min) = schema.get("minLength").and_then(Value::as_u64)
                    && chars < min
                {
                    return Err(at(&format!("must be at least {min} characters long")));
                }
                if let Some(max) = schema.get("maxLength").and_then(Value::as_u64)
                    && chars > max
                {
                    return Err(at(&format!("must be at most {max} characters long")));
                }
            }
            Value::Number(n) => {
                let x = n.as_f64().unwrap_or(f64::NAN);
                let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
                if let Some(min) = bound("minimum").filter(|m| x < *m) {
                    return Err(at(&format!("must be at least {min}")));
                }
                if let Some(max) = bound("maximum").filter(|m| x > *m) {
                    return Err(at(&format!("must be at most {max}")));
                }
                if let Some(min) = bound("exclusiveMinimum").filter(|m| x <= *m) {
                    return Err(at(&format!("must be greater than {min}")));
                }
                if let Some(max) = bound("exclusiveMaximum").filter(|m| x >= *m) {
                    return Err(at(&format!("must be less than {max}")));
                }
            }
            _ => {}
        }
        if let Some(Value::Array(all)) = schema.get("allOf") {
            for sub in all {
                self.check(sub, value, path, depth + 1)?;
            }
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(options)) = schema.get(key) {
                // The error of the only alternative whose type admits the
                // value (schemars writes `Option<T>` as T or null) names
                // the field that is wrong; otherwise say none matched.
                let mut candidates = Vec::new();
                let mut matched = false;
                for sub in options {
                    match self.check(sub, value, path, depth + 1) {
                        Ok(()) => {
                            matched = true;
                            break;
                        }
                        Err(e) if self.admits(sub, value) => candidates.push(e),
                        Err(_) => {}
                    }
                }
                if !matched {
                    return Err(match <[String; 1]>::try_from(candidates) {
                        Ok([only]) => only,
                        Err(_) => at(&format!(
                            "matches none of the {} allowed shapes (got {})",
                            options.len(),
                            describe(value)
                        )),
                    });
                }
            }
        }
        if let Some(not) = schema.get("not")
            && self.check(not, value, path, depth + 1).is_ok()
        {
            return Err(at("has a shape that is not allowed here"));
        }
        Ok(())
    }

    fn check_object(
        &self,
        schema: &Map<String, Value>,
        members: &Map<String, Value>,
        path: &str,
        depth: usize,
    ) -> Result<(), String> {
        let empty = Map::new();
        let properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        if let Some(Value::Array(required)) = schema.get("required") {
            for name in required.iter().filter_map(Value::as_str) {
                if !members.contains_key(name) {
                    return Err(format!("{path}.{name} is required but missing"));
                }
            }
        }
        for (name, member) in members {
            let member_path = format!("{path}.{name}");
            match (properties.get(name), schema.get("additionalProperties")) {
                (Some(sub), _) => self.check(sub, member, &member_path, depth + 1)?,
                // Members `patternProperties` would allow are not checked.
                (None, Some(Value::Bool(false))) if !schema.contains_key("patternProperties") => {
                    let known: Vec<&str> = properties.keys().map(String::as_str).collect();
                    return Err(format!(
                        "{member_path} is not a known field (known: {})",
                        if known.is_empty() {
                            "none".to_owned()
                        } else {
                            known.join(", ")
                        }
                    ));
                }
                (None, Some(extra @ Value::Object(_)))
                    if !schema.contains_key("patternProperties") =>
                {
                    self.check(extra, member, &member_path, depth + 1)?;
                }
                (None, _) => {}
            }
        }
        Ok(())
    }

    fn check_array(
        &self,
        schema: &Map<String, Value>,
        items: &[Value],
        path: &str,
        depth: usize,
    ) -> Result<(), String> {
        let len = items.len() as u64;
        if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
            && len < min
        {
            return Err(at(path, &format!("must have at least {min} elements")));
        }
        if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
            && len > max
        {
            return Err(at(path, &format!("must have at most {max} elements")));
        }
        let prefix = schema
            .get("prefixItems")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        for (i, item) in items.iter().enumerate() {
            // Lua arrays count from 1.
            let item_path = format!("{path}[{}]", i + 1);
            if let Some(sub) = prefix.get(i) {
                self.check(sub, item, &item_path, depth + 1)?;
            } else if let Some(sub) = schema.get("items") {
                self.check(sub, item, &item_path, depth + 1)?;
            }
        }
        Ok(())
    }
}

/// `path what`, or `what` alone at the top.
fn at(path: &str, what: &str) -> String {
    if path.is_empty() {
        what.to_owned()
    } else {
        format!("{path} {what}")
    }
}

/// Whether a missing argument with this schema stands for the empty table:
/// the schema (after a `$ref`) is an object's. Such an argument is checked
/// as `{}`, so that its required fields stay required when a script calls
/// `f()` for `f{}`.
pub(crate) fn missing_is_empty_table(schema: &Value) -> bool {
    let target = match schema.get("$ref").and_then(Value::as_str) {
        Some(reference) => resolve(schema, reference).unwrap_or(schema),
        None => schema,
    };
    target.as_object().is_some_and(wants_object_only)
}

/// Whether a schema says the value is an object and cannot be an array.
fn wants_object_only(schema: &Map<String, Value>) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => {
            ts.iter().any(|t| t == "object") && !ts.iter().any(|t| t == "array")
        }
        None => schema.contains_key("properties") || schema.contains_key("required"),
        _ => false,
    }
}

/// A local reference (`#/$defs/Name`, `#/definitions/Name`, `#`).
fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    root.pointer(pointer)
}

fn is_type(value: &Value, t: &str) -> bool {
    match (t, value) {
        ("null", Value::Null)
        | ("boolean", Value::Bool(_))
        | ("number", Value::Number(_))
        | ("string", Value::String(_))
        | ("array", Value::Array(_))
        | ("object", Value::Object(_)) => true,
        // A Lua float with no fraction (3.0) is an integer to JSON Schema.
        ("integer", Value::Number(n)) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        // The empty Lua table crosses as `[]`; it is also the empty object.
        ("object", Value::Array(items)) => items.is_empty(),
        _ => false,
    }
}

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

fn article(t: &str) -> String {
    match t {
        "null" => "nil".to_owned(),
        "integer" => "an integer".to_owned(),
        "array" => "an array".to_owned(),
        "object" => "an object".to_owned(),
        other => format!("a {other}"),
    }
}

/// A value as an error message shows it: its type, and a short form, in
/// the style of the untyped argument messages (``integer `7` ``,
/// `string "x"`).
fn describe(value: &Value) -> String {
    let kind = match value {
        Value::Null => return "nil".to_owned(),
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    match value {
        Value::String(_) => format!("{kind} {}", short(value)),
        _ => format!("{kind} `{}`", short(value)),
    }
}

/// JSON text cut to a readable length, written only as far as needed.
fn short(value: &Value) -> String {
    const MAX: usize = 40;
    let mut out = Prefix {
        bytes: Vec::new(),
        max: MAX * 4 + 4,
    };
    // A full prefix stops the writer with an error, which is the point.
    let _ = serde_json::to_writer(&mut out, value);
    let text = String::from_utf8_lossy(&out.bytes);
    if text.chars().count() <= MAX {
        return text.into_owned();
    }
    let cut: String = text.chars().take(MAX - 3).collect();
    format!("{cut}...")
}

/// A writer that keeps the first `max` bytes and then refuses more.
struct Prefix {
    bytes: Vec<u8>,
    max: usize,
}

impl std::io::Write for Prefix {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let room = self.max.saturating_sub(self.bytes.len());
        if room == 0 {
            return Err(std::io::Error::other("enough"));
        }
        let n = buf.len().min(room);
        self.bytes.extend_from_slice(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A schema as a Lua-flavoured type: `string`, `integer?`, `{date: string}[]`,
/// `{name: string, tags?: string[]}`, `"open"|"closed"`, `any`.
pub(crate) fn render(schema: &Value) -> String {
    let text = Renderer {
        root: schema,
        steps: Cell::new(0),
    }
    .render(schema, 0);
    if text.chars().count() <= MAX_RENDERED {
        return text;
    }
    let cut: String = text.chars().take(MAX_RENDERED - 3).collect();
    format!("{cut}...")
}

struct Renderer<'a> {
    root: &'a Value,
    /// Nodes rendered so far; past [`MAX_RENDER_STEPS`] the rest is `...`.
    steps: Cell<usize>,
}

impl Renderer<'_> {
    fn render(&self, schema: &Value, depth: usize) -> String {
        let Value::Object(s) = schema else {
            return "any".to_owned();
        };
        if depth > 6 {
            return "table".to_owned();
        }
        let steps = self.steps.get() + 1;
        self.steps.set(steps);
        if steps > MAX_RENDER_STEPS {
            return "...".to_owned();
        }
        if let Some(reference) = s.get("$ref").and_then(Value::as_str) {
            return match resolve(self.root, reference) {
                Some(target) => self.render(target, depth + 1),
                None => "any".to_owned(),
            };
        }
        if let Some(Value::Array(options)) = s.get("enum") {
            return options.iter().map(short).collect::<Vec<_>>().join("|");
        }
        if let Some(value) = s.get("const") {
            return short(value);
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(options)) = s.get(key) {
                return self.union(options.iter().map(|o| self.render(o, depth + 1)));
            }
        }
        if let Some(Value::Array(all)) = s.get("allOf")
            && let [only] = all.as_slice()
        {
            return self.render(only, depth + 1);
        }
        match s.get("type") {
            Some(Value::String(t)) => self.typed(s, t, depth),
            Some(Value::Array(ts)) => self.union(
                ts.iter()
                    .filter_map(Value::as_str)
                    .map(|t| self.typed(s, t, depth)),
            ),
            _ if s.contains_key("properties") => self.typed(s, "object", depth),
            _ => "any".to_owned(),
        }
    }

    /// Alternatives joined by `|`; `T|nil` is written `T?`.
    fn union(&self, parts: impl Iterator<Item = String>) -> String {
        let mut parts: Vec<String> = parts.collect();
        let nullable = parts.iter().any(|p| p == "nil");
        parts.retain(|p| p != "nil");
        parts.dedup();
        match (parts.len(), nullable) {
            (0, _) => "nil".to_owned(),
            (1, true) => format!("{}?", parts[0]),
            (_, true) => format!("({})?", parts.join("|")),
            (_, false) => parts.join("|"),
        }
    }

    fn typed(&self, s: &Map<String, Value>, t: &str, depth: usize) -> String {
        match t {
            "null" => "nil".to_owned(),
            "boolean" | "string" | "integer" | "number" => t.to_owned(),
            "array" => {
                if let Some(Value::Array(prefix)) = s.get("prefixItems") {
                    let parts: Vec<String> =
                        prefix.iter().map(|p| self.render(p, depth + 1)).collect();
                    return format!("{{{}}}", parts.join(", "));
                }
                match s.get("items") {
                    Some(items @ Value::Object(_)) => {
                        let inner = self.render(items, depth + 1);
                        if inner.ends_with('?') || inner.contains('|') {
                            format!("({inner})[]")
                        } else {
                            format!("{inner}[]")
                        }
                    }
                    _ => "any[]".to_owned(),
                }
            }
            "object" => self.object(s, depth),
            _ => "any".to_owned(),
        }
    }

    fn object(&self, s: &Map<String, Value>, depth: usize) -> String {
        let required: Vec<&str> = s
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let fields: Vec<String> = s
            .get("properties")
            .and_then(Value::as_object)
            .map(|props| {
                props
                    .iter()
                    .map(|(name, sub)| {
                        let mark = if required.contains(&name.as_str()) {
                            ""
                        } else {
                            "?"
                        };
                        let name = if name.chars().count() > 64 {
                            format!("{}...", name.chars().take(61).collect::<String>())
                        } else {
                            name.clone()
                        };
                        format!("{name}{mark}: {}", self.render(sub, depth + 1))
                    })
                    .collect()
            })
            .unwrap_or_default();
        if !fields.is_empty() {
            return format!("{{{}}}", fields.join(", "));
        }
        match s.get("additionalProperties") {
            Some(extra @ Value::Object(_)) => {
                format!("{{[string]: {}}}", self.render(extra, depth + 1))
            }
            // Declared with no fields at all: the empty table.
            Some(Value::Bool(false)) | None if s.contains_key("properties") => "{}".to_owned(),
            _ => "table".to_owned(),
        }
    }
}

/// Whether a schema describes an object with named fields: such a sole
/// argument is written as Lua's table call, `f{a: T}`.
pub(crate) fn is_record(schema: &Value) -> bool {
    let root = schema;
    let mut schema = schema;
    for _ in 0..MAX_DEPTH {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(reference) => match resolve(root, reference) {
                Some(target) if !std::ptr::eq(target, schema) => schema = target,
                _ => return false,
            },
            None => break,
        }
    }
    // Named fields, or a declared empty set of them (a tool that takes
    // no arguments: `f{}`).
    schema.get("properties").is_some_and(Value::is_object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn visits() -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "visits": {"type": "array", "items": {"$ref": "#/$defs/Visit"}},
                "nick": {"type": ["string", "null"]}
            },
            "required": ["name", "visits"],
            "additionalProperties": false,
            "$defs": {"Visit": {"type": "object", "properties": {"date": {"type": "string"}}, "required": ["date"]}}
        })
    }

    #[test]
    fn renders_records_arrays_refs_and_optionals_as_lua_types() {
        assert_eq!(
            render(&visits()),
            "{name: string, nick?: string?, visits: {date: string}[]}"
        );
        assert_eq!(
            render(&json!({"enum": ["open", "closed"]})),
            r#""open"|"closed""#
        );
        assert_eq!(render(&json!({"type": "integer"})), "integer");
        assert_eq!(render(&json!({})), "any");
        assert_eq!(
            render(&json!({"type": "object", "additionalProperties": {"type": "number"}})),
            "{[string]: number}"
        );
        assert_eq!(
            render(
                &json!({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]})
            ),
            "{string, integer}"
        );
    }

    #[test]
    fn a_recursive_schema_renders_and_checks_without_looping() {
        let tree = json!({
            "$ref": "#/$defs/Node",
            "$defs": {"Node": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}}
        });
        assert!(render(&tree).contains("kids?"));
        let mut value = json!({});
        for _ in 0..200 {
            value = json!({"kids": [value]});
        }
        assert!(check(&tree, &value).is_ok());
        let self_ref = json!({"$ref": "#"});
        assert!(check(&self_ref, &json!(1)).is_ok());
        assert_eq!(render(&self_ref), "table");
    }

    #[test]
    fn errors_name_the_path_and_what_was_expected() {
        let schema = visits();
        assert_eq!(
            check(&schema, &json!({"name": 3, "visits": []})),
            Err(".name must be a string (got integer `3`)".to_owned())
        );
        assert_eq!(
            check(
                &schema,
                &json!({"name": "a", "visits": [{"date": "x"}, {"date": 4}]})
            ),
            Err(".visits[2].date must be a string (got integer `4`)".to_owned())
        );
        assert_eq!(
            check(&schema, &json!({"visits": []})),
            Err(".name is required but missing".to_owned())
        );
        assert_eq!(
            check(&schema, &json!({"name": "a", "visits": [], "age": 3})),
            Err(".age is not a known field (known: name, nick, visits)".to_owned())
        );
        assert!(check(&schema, &json!({"name": "a", "visits": [], "nick": null})).is_ok());
    }

    #[test]
    fn numbers_bounds_enums_and_unions() {
        let int = json!({"type": "integer", "minimum": 1, "maximum": 10});
        assert!(check(&int, &json!(3)).is_ok());
        assert!(
            check(&int, &json!(3.0)).is_ok(),
            "a Lua float with no fraction"
        );
        assert!(
            check(&int, &json!(3.5))
                .unwrap_err()
                .contains("must be an integer")
        );
        assert!(check(&int, &json!(11)).unwrap_err().contains("at most 10"));
        let e = json!({"enum": ["a", "b"]});
        assert!(check(&e, &json!("c")).unwrap_err().contains("one of"));
        let u = json!({"anyOf": [{"type": "string"}, {"type": "integer"}]});
        assert!(check(&u, &json!(1)).is_ok());
        assert!(
            check(&u, &json!(true))
                .unwrap_err()
                .contains("none of the 2")
        );
        // The empty Lua table crosses as [] and passes as an empty object.
        assert!(check(&json!({"type": "object"}), &json!([])).is_ok());
    }

    #[test]
    fn the_empty_table_is_checked_as_the_empty_object() {
        let schema =
            json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]});
        assert_eq!(
            check(&schema, &json!([])),
            Err(".q is required but missing".to_owned())
        );
        assert!(check(&json!({"type": "object"}), &json!([])).is_ok());
        assert!(check(&json!({"type": ["object", "array"]}), &json!([])).is_ok());
        assert!(missing_is_empty_table(&schema));
        assert!(!missing_is_empty_table(&json!({"type": "string"})));
    }

    #[test]
    fn a_union_with_one_fitting_alternative_reports_its_field() {
        // schemars' Option<Struct>.
        let schema = json!({
            "anyOf": [{"$ref": "#/$defs/Q"}, {"type": "null"}],
            "$defs": {"Q": {"type": "object", "properties": {"text": {"type": "string"}}}}
        });
        assert_eq!(
            check(&schema, &json!({"text": 1})),
            Err(".text must be a string (got integer `1`)".to_owned())
        );
    }

    #[test]
    fn pattern_properties_are_not_refused_as_unknown() {
        let schema = json!({
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "patternProperties": {"^x-": {}},
            "additionalProperties": false
        });
        assert!(check(&schema, &json!({"a": "1", "x-y": 2})).is_ok());
    }

    #[test]
    fn top_level_messages_have_no_stray_space() {
        let schema = json!({"type": "array", "minItems": 2});
        assert_eq!(
            check(&schema, &json!([1])),
            Err("must have at least 2 elements".to_owned())
        );
        assert_eq!(
            check(&json!(false), &json!(1)),
            Err("is not allowed here".to_owned())
        );
    }

    #[test]
    fn a_hostile_schema_is_bounded_in_checking_and_rendering() {
        // Each level doubles the work: 2^48 visits without a budget.
        let schema = json!({
            "$ref": "#/$defs/A",
            "$defs": {"A": {"anyOf": [
                {"$ref": "#/$defs/A"}, {"$ref": "#/$defs/A"}, {"type": "string"}
            ], "allOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/A"}]}}
        });
        let err = check(&schema, &json!(1)).unwrap_err();
        assert!(err.contains("too complex"), "{err}");
        assert!(render(&schema).len() <= MAX_RENDERED + 3);
        // A wide recursive record renders within the budget.
        let mut props = Map::new();
        for i in 0..256 {
            props.insert(format!("f{i}"), json!({"$ref": "#/$defs/R"}));
        }
        let wide =
            json!({"$ref": "#/$defs/R", "$defs": {"R": {"type": "object", "properties": props}}});
        assert!(render(&wide).ends_with("..."));
        // A huge value is described without writing all of it.
        let big = json!(vec!["x".repeat(1000); 1000]);
        assert!(check(&json!({"type": "string"}), &big).unwrap_err().len() < 200);
    }

    #[test]
    fn chained_refs_resolve_from_the_root() {
        let schema = json!({
            "$ref": "#/$defs/A",
            "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"type": "object", "properties": {"x": {"type": "integer"}}}}
        });
        assert!(is_record(&schema));
    }

    #[test]
    fn only_records_are_table_calls() {
        assert!(is_record(&visits()));
        assert!(!is_record(&json!({"type": "string"})));
        assert!(!is_record(&json!({"$ref": "#"})));
        let none = json!({"type": "object", "properties": {}});
        assert!(is_record(&none));
        assert_eq!(render(&none), "{}");
    }
}
