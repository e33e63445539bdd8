//! Argument checking, driven by each tool's own `inputSchema`.
//!
//! The schema a client sees is the schema enforced here, so the two cannot
//! disagree. Only the small, portable subset the tool table uses is
//! understood: `type` (object, string, integer, number, boolean, array),
//! `properties`, `required`, `enum`, `items`, `minimum`, `maximum` and
//! `maxItems`. An integer is an integer by value, as JSON Schema has it:
//! `1.0` is the integer 1, and is sent to resmon as `1` (`accepted`).
//! Unknown arguments are refused rather than ignored: an argument that is
//! silently dropped is a request the caller believes was honoured.
//! The one exception is `HARNESS_KEYS`: keys a harness adds to every tool for
//! its own scheduling, which no caller means as a request to resmon.
//! A key the arguments' text gives twice is refused too (`refuse_repeats`),
//! read from the text by `twice_given`, since the parsed object keeps only
//! the last. Every refusal names the argument and happens before any
//! request is built.

use std::borrow::Cow;

use serde_json::{Map, Number, Value};

use crate::error::ToolError;

mod twice_given;

pub use twice_given::Repeats;
pub(crate) use twice_given::TwiceGiven;

/// Arguments that a harness adds to every tool's parameters for its own use,
/// with the harness that adds them. They are accepted with any value and
/// never reach a handler's decisions: refusing them would fail every call
/// that harness makes. This is the only place such keys are named; a tool
/// that declares one of them as its own argument still has it checked.
/// docs/setup.md names each of them (a unit test below checks).
pub(crate) const HARNESS_KEYS: &[HarnessKey] = &[
    // A boolean added to every tool's parameters; its system prompt tells
    // the model to set it on a call that must wait for the one before.
    HarnessKey { key: "wait_for_previous", harness: "Gemini CLI" },
];

pub(crate) struct HarnessKey {
    pub key: &'static str,
    /// Which harness adds the key: the record of why it is here, checked
    /// against docs/setup.md by a unit test rather than read at run time.
    #[cfg_attr(not(test), allow(dead_code))]
    pub harness: &'static str,
}

pub(crate) fn added_by_a_harness(key: &str) -> bool {
    HARNESS_KEYS.iter().any(|entry| entry.key == key)
}

/// Refuses arguments whose text gave a key more than once: at the top, or
/// inside an argument that is an object (update_settings' `settings`,
/// create_routine's `entity`). Any repetition, equal values included: JSON
/// leaves a repeated name's meaning to each reader, so what a harness showed
/// for confirmation and what would be sent could differ (contract-notes
/// 30). This reads the text, not what `entity` means: its values still go to
/// resmon unexamined.
pub fn refuse_repeats(repeats: &Repeats) -> Result<(), ToolError> {
    let mut repeated: Vec<(String, String, usize)> =
        repeats.keys.iter().map(|(key, values)| (key.clone(), String::new(), given_times(values))).collect();
    for (member, keys) in &repeats.inside {
        repeated.extend(keys.iter().map(|(key, values)| (key.clone(), member.clone(), given_times(values))));
    }
    let Some((key, within, times)) = repeated.first() else { return Ok(()) };
    let argument = if within.is_empty() { key.clone() } else { format!("{within}.{key}") };
    let place = if within.is_empty() { "the arguments".to_string() } else { format!("`{within}`") };
    let named: Vec<Value> = repeated
        .iter()
        .map(|(key, within, _)| {
            Value::from(if within.is_empty() { key.clone() } else { format!("{within}.{key}") })
        })
        .collect();
    Err(ToolError::invalid_argument(
        &argument,
        format!(
            "`{key}` is given {times} times in {place}. A repeated name means whatever each reader \
             makes of it, so a confirmation shown to the person and the request this server would \
             send could disagree; nothing was sent. Give `{key}` once, with the value meant."
        ),
    )
    .with_detail("given_twice", Value::Array(named)))
}

fn given_times(values: &Value) -> usize {
    values.as_array().map_or(2, Vec::len)
}

/// Checks `arguments` against a tool's input schema, naming the argument of
/// any refusal.
pub fn validate(schema: &Value, arguments: &Value) -> Result<(), ToolError> {
    accepted(schema, arguments).map(drop)
}

/// The arguments `validate` accepts, as the tool is to read and send them:
/// an integer written as a number with a fraction part or an exponent
/// (`1.0`, `2e0`) is replaced by that integer, so that resmon is sent `1`.
/// Borrowed as given when nothing was written that way.
pub(crate) fn accepted<'a>(schema: &Value, arguments: &'a Value) -> Result<Cow<'a, Value>, ToolError> {
    let Some(object) = arguments.as_object() else {
        return Err(ToolError::invalid_argument(
            "arguments",
            format!("The arguments must be a JSON object, not {}.", describe(arguments)),
        ));
    };
    // The root is always closed, even for a tool that takes no arguments.
    let rewritten = check_object(schema, object, "", true)?;
    if rewritten.is_empty() {
        return Ok(Cow::Borrowed(arguments));
    }
    let mut object = object.clone();
    for (name, value) in rewritten {
        object.insert(name, value);
    }
    Ok(Cow::Owned(Value::Object(object)))
}

/// `closed`: refuse keys the schema does not name (the argument root).
/// Answers the members whose value is to be read as something other than
/// it was written (`accepted`), with that value.
fn check_object(
    schema: &Value,
    object: &Map<String, Value>,
    prefix: &str,
    closed: bool,
) -> Result<Vec<(String, Value)>, ToolError> {
    let empty = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    // A harness's own keys are only ever allowed at the root, where it puts them.
    let allowed = |key: &str| properties.contains_key(key) || (prefix.is_empty() && added_by_a_harness(key));
    let unknown = object.keys().find(|key| !allowed(key));
    if closed && let Some(unknown) = unknown {
        let mut known: Vec<&str> = properties.keys().map(String::as_str).collect();
        known.sort_unstable();
        let known = if known.is_empty() { "none".to_string() } else { known.join(", ") };
        return Err(ToolError::invalid_argument(
            &format!("{prefix}{unknown}"),
            format!("`{prefix}{unknown}` is not an argument of this tool (it takes: {known})."),
        ));
    }
    for required in schema.get("required").and_then(Value::as_array).into_iter().flatten() {
        let Some(name) = required.as_str() else { continue };
        if object.get(name).is_none_or(Value::is_null) {
            return Err(ToolError::invalid_argument(
                &format!("{prefix}{name}"),
                format!("`{prefix}{name}` is required."),
            ));
        }
    }
    let mut rewritten = Vec::new();
    for (name, value) in object {
        // An explicit null means "not given" for an optional argument.
        if value.is_null() {
            continue;
        }
        if let Some(property) = properties.get(name) {
            let ids = holds_ids(name);
            if let Some(value) = check_value(property, value, &format!("{prefix}{name}"), ids)? {
                rewritten.push((name.clone(), value));
            }
        }
    }
    Ok(rewritten)
}

/// Whether an argument holds ids of resmon's records (routine_id, exec_id,
/// doc_id, profile_id; doc_ids' items): by its name, `…_id` or `…_ids`. An
/// integer there is 1 or more whatever its schema's `minimum` says: no
/// record has id 0, and the listing's byte budget does not allow repeating
/// `"minimum": 1` on every id (contract-notes 29). A unit test names them all.
pub(crate) fn holds_ids(name: &str) -> bool {
    name.ends_with("_id") || name.ends_with("_ids")
}

/// Checks one value against its property's schema. `ids`: an integer here
/// is a record's id (`holds_ids`). Answers the value to read in its place
/// when it was written otherwise (an integer written as `1.0`).
fn check_value(schema: &Value, value: &Value, name: &str, ids: bool) -> Result<Option<Value>, ToolError> {
    let expected = schema.get("type").and_then(Value::as_str);
    if let (Some("integer"), Value::Number(number)) = (expected, value) {
        return integer(schema, number, name, ids).map(|read| {
            // Written as an integer already: nothing to replace.
            (!number.is_i64()).then(|| Value::from(read))
        });
    }
    let fits = match expected {
        Some("string") => value.is_string(),
        Some("integer") => false,
        Some("number") => value.is_number(),
        Some("boolean") => value.is_boolean(),
        Some("array") => value.is_array(),
        Some("object") => value.is_object(),
        _ => true,
    };
    if !fits {
        let expected = expected.unwrap_or("value");
        return Err(ToolError::invalid_argument(
            name,
            format!("`{name}` must be {} {expected}, not {}.", article(expected), describe(value)),
        ));
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        let allowed: Vec<String> = allowed.iter().map(Value::to_string).collect();
        return Err(ToolError::invalid_argument(
            name,
            format!("`{name}` must be one of {}; got {}.", allowed.join(", "), clip(value)),
        ));
    }
    if let (Some(minimum), Some(number)) = (schema.get("minimum").and_then(Value::as_f64), value.as_f64())
        && number < minimum
    {
        return Err(ToolError::invalid_argument(
            name,
            format!("`{name}` must be at least {minimum}; got {}.", clip(value)),
        ));
    }
    let mut rewritten = None;
    if let Some(items) = value.as_array() {
        if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
            && items.len() as u64 > max
        {
            return Err(ToolError::invalid_argument(
                name,
                format!("`{name}` may hold at most {max} entries; got {}.", items.len()),
            ));
        }
        if let Some(item_schema) = schema.get("items") {
            for (index, item) in items.iter().enumerate() {
                if let Some(read) = check_value(item_schema, item, &format!("{name}[{index}]"), ids)? {
                    rewritten.get_or_insert_with(|| items.clone())[index] = read;
                }
            }
        }
    }
    // A nested object is only checked for being an object. The one with
    // named properties, create_routine's `entity`, goes to resmon unexamined
    // (contract 1.0 "Watch profiles and the basis of a match"): resmon's
    // validator is the one that also governs the app's own editor.
    Ok(rewritten.map(Value::Array))
}

/// The largest magnitude at which a number written with a fraction part or
/// an exponent is still read as exactly the integer it names: 2^53. Past it,
/// `9007199254740993.0` reads as ...992, so the value is not taken.
const EXACT_AS_WRITTEN: f64 = 9_007_199_254_740_992.0;

/// An integer argument's value, within its range: the schema's `minimum`
/// (1 for an id, at least) and `maximum`, and at most 2^63 − 1, the largest
/// integer resmon stores, which no schema repeats (contract-notes 29).
fn integer(schema: &Value, number: &Number, name: &str, ids: bool) -> Result<i64, ToolError> {
    let mut lowest = schema.get("minimum").and_then(Value::as_i64).unwrap_or(i64::MIN);
    if ids {
        lowest = lowest.max(1);
    }
    let highest = schema.get("maximum").and_then(Value::as_i64).unwrap_or(i64::MAX);
    // A bound only the storage sets is named where it is the point (an id's
    // range) or where it was passed, never added to an ordinary page size.
    let range = match (lowest == i64::MIN, highest == i64::MAX) {
        _ if ids => format!("an integer from {lowest} to {} (2^63 − 1)", i64::MAX),
        (true, true) => "an integer".to_string(),
        (false, true) => format!("an integer of at least {lowest}"),
        (true, false) => format!("an integer of at most {highest}"),
        (false, false) => format!("an integer from {lowest} to {highest}"),
    };
    let beyond =
        || format!("{number} is larger than {} (2^63 − 1), the largest integer resmon stores", i64::MAX);
    let what = if ids { format!("an id, {range}") } else { range };
    let out_of_range = |got: String| {
        ToolError::invalid_argument(name, format!("`{name}` must be {what}; {got}."))
            .with_detail("minimum", Value::from(lowest))
            .with_detail("maximum", Value::from(highest))
    };
    let read = if let Some(read) = number.as_i64() {
        read
    } else if number.is_u64() {
        return Err(out_of_range(beyond()));
    } else {
        let float = number.as_f64().unwrap_or(f64::NAN);
        if float.fract() != 0.0 {
            return Err(ToolError::invalid_argument(
                name,
                format!("`{name}` must be {what}, not a fractional number ({number})."),
            ));
        }
        if float.abs() > EXACT_AS_WRITTEN {
            // 2^63 and beyond, or below -2^63: out of any range an argument has.
            if float >= 9_223_372_036_854_775_808.0 {
                return Err(out_of_range(beyond()));
            }
            if float < -9_223_372_036_854_775_808.0 {
                return Err(out_of_range(format!("{number} is smaller than any integer resmon stores")));
            }
            return Err(ToolError::invalid_argument(
                name,
                // The number as read may already differ from the one typed,
                // so it is not quoted back.
                format!(
                    "`{name}` was written with a fraction part or an exponent, and past 2^53 \
                     (9007199254740992) such a number may not be exactly the integer meant; write it in \
                     plain digits."
                ),
            ));
        }
        // Within ±2^53 a whole number is exactly the integer it names.
        float as i64
    };
    if read < lowest || read > highest {
        return Err(out_of_range(format!("got {read}")));
    }
    Ok(read)
}

fn article(type_name: &str) -> &'static str {
    if type_name.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" }
}

fn describe(value: &Value) -> &'static str {
    match value {
        Value::Number(number) if number.as_f64().is_some_and(|float| float.fract() != 0.0) => {
            "a fractional number"
        }
        // `1.0` and `2e0` are integers too, as JSON Schema reads them.
        Value::Number(_) => "an integer",
        other => kind_of(other),
    }
}

/// A JSON value's kind in plain words ("a string", "an object"), for a
/// sentence that refuses a value of the wrong kind where the finer reading
/// of a number that `describe` gives a tool's argument does not matter (a
/// JSON-RPC envelope's fields, a prompt's arguments).
pub(crate) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn clip(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 60 {
        text
    } else {
        format!("{}…", text.chars().take(60).collect::<String>())
    }
}

/// Typed reads of arguments that `validate` has already accepted.
pub struct Args<'a>(pub &'a Map<String, Value>);

impl<'a> Args<'a> {
    /// A list argument that must name at least one thing, none of them blank.
    pub(crate) fn non_empty_strings(&self, name: &str) -> Result<Vec<String>, ToolError> {
        let items: Vec<String> = self
            .get(name)
            .and_then(Value::as_array)
            .map(|items| items.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default();
        if items.is_empty() {
            return Err(ToolError::invalid_argument(name, format!("`{name}` is empty: name at least one.")));
        }
        if items.iter().any(|item| item.trim().is_empty()) {
            return Err(ToolError::invalid_argument(name, format!("`{name}` has a blank entry.")));
        }
        Ok(items)
    }

    pub fn get(&self, name: &str) -> Option<&'a Value> {
        self.0.get(name).filter(|value| !value.is_null())
    }

    pub(crate) fn str(&self, name: &str) -> Option<&'a str> {
        self.get(name).and_then(Value::as_str)
    }

    pub(crate) fn int(&self, name: &str) -> Option<i64> {
        self.get(name).and_then(Value::as_i64)
    }

    pub(crate) fn bool(&self, name: &str) -> Option<bool> {
        self.get(name).and_then(Value::as_bool)
    }

    /// A page size: the default when absent, clamped to `max` when larger.
    pub(crate) fn limit(&self, name: &str, default: i64, max: i64) -> i64 {
        self.int(name).unwrap_or(default).clamp(1, max)
    }

    /// A required string the schema has already made present.
    pub(crate) fn required_str(&self, name: &str) -> Result<&'a str, ToolError> {
        self.str(name).ok_or_else(|| ToolError::invalid_argument(name, format!("`{name}` is required.")))
    }

    pub(crate) fn required_int(&self, name: &str) -> Result<i64, ToolError> {
        self.int(name).ok_or_else(|| ToolError::invalid_argument(name, format!("`{name}` is required.")))
    }
}

#[cfg(test)]
mod tests;
