//! Where the fields of a request came from: which carry the caller's
//! arguments and which this server chose (by each field's whole path,
//! contract-notes 17), the values the tool's schema offers and what the
//! request carried for them, and whether the caller chose the page size
//! (contract-notes 4). It reads the request and the call's state only.

use serde_json::Value;

use super::super::{Backend, CallerField, Offered};

impl Backend {
    /// The call's offered values, each with what the request's query and
    /// top-level body fields carried for it.
    pub(super) fn offered_in(&self, query: &[(&str, String)], body: Option<&Value>) -> Vec<Offered> {
        let body = body.and_then(Value::as_object);
        let sent_in = |field: &String| -> Vec<String> {
            let from_query = query.iter().filter(|(key, _)| key == field).map(|(_, value)| value.clone());
            let from_body = body.and_then(|body| body.get(field)).and_then(Value::as_str).map(str::to_string);
            from_query.chain(from_body).collect()
        };
        let mut offered = self.offered.clone();
        for offer in &mut offered {
            offer.sent = offer.fields.iter().flat_map(sent_in).collect();
        }
        offered
    }

    /// Splits a request's query fields and body fields into those that
    /// carry the caller's arguments and those this server chose, each body
    /// field by its whole path (`parameters.query`): a field is the caller's
    /// when the path of one of the call's fields leads to it or contains it;
    /// an object that holds both kinds (create_routine's `parameters`) is
    /// neither, and its fields are sorted one by one (contract-notes 17).
    /// Each of the caller's fields keeps the values it sent, except any that
    /// a field of this server's sent too, since a sentence quoting such a
    /// value may be about either.
    pub(super) fn provenance(
        &self,
        query: &[(&str, String)],
        body: Option<&Value>,
    ) -> (Vec<CallerField>, Vec<String>) {
        let mut sorted = Sorted::default();
        for (key, value) in query {
            if self.is_callers(key) {
                sorted.callers.push(CallerField { path: key.to_string(), values: vec![value.clone()] });
            } else {
                sorted.chosen.push(key.to_string());
                sorted.chosen_values.push(value.clone());
            }
        }
        if let Some(Value::Object(fields)) = body {
            self.sort_fields(fields, "", &mut sorted);
        }
        let Sorted { mut callers, chosen, chosen_values } = sorted;
        for field in &mut callers {
            field.values.retain(|value| !chosen_values.contains(value));
        }
        (callers, chosen)
    }

    fn sort_fields(&self, fields: &serde_json::Map<String, Value>, prefix: &str, sorted: &mut Sorted) {
        for (key, value) in fields {
            let path = if prefix.is_empty() { key.clone() } else { format!("{prefix}.{key}") };
            if self.is_callers(&path) {
                // Each is named by its last name, a single word only as a key
                // or with its path (contract-notes 17).
                caller_field(path, value, &mut sorted.callers);
            } else if self.caller_fields.iter().any(|field| within(field, &path)) {
                if let Value::Object(inner) = value {
                    self.sort_fields(inner, &path, sorted);
                }
            } else {
                sorted.chosen.push(path);
                scalars(value, &mut sorted.chosen_values);
            }
        }
    }

    /// Whether a request field (by its path) carries the caller's argument:
    /// it is one of the call's fields, or lies inside one.
    fn is_callers(&self, path: &str) -> bool {
        self.caller_fields.iter().any(|field| field == path || within(path, field))
    }

    /// Whether the request asked for a page whose size the caller chose: a
    /// page field in its query or body that carries the caller's argument.
    pub(super) fn caller_paged(&self, query: &[(&str, String)], body: Option<&Value>) -> bool {
        let chosen_by_caller = |field: &str| self.caller_fields.iter().any(|name| name == field);
        takes_page(query, body).iter().any(|field| chosen_by_caller(field))
    }
}

/// A request's fields as `provenance` sorts them.
#[derive(Default)]
struct Sorted {
    callers: Vec<CallerField>,
    chosen: Vec<String>,
    /// What this server's own fields sent.
    chosen_values: Vec<String>,
}

/// One of the caller's fields with the values it sent and, inside an object
/// it holds, each key by its own path: the names the caller wrote (a
/// settings key, the entity's `mode`) are the ones a refusal would use.
/// Only keys the caller wrote are added so: the structure this server
/// builds is not the caller's (`provenance`).
fn caller_field(path: String, value: &Value, callers: &mut Vec<CallerField>) {
    let mut values = Vec::new();
    scalars(value, &mut values);
    let inner = value
        .as_object()
        .map(|inner| inner.iter().map(|(key, value)| (format!("{path}.{key}"), value)).collect::<Vec<_>>());
    callers.push(CallerField { path, values });
    for (path, value) in inner.unwrap_or_default() {
        caller_field(path, value, callers);
    }
}

/// The strings (not blank) and numbers a value holds at any depth, as text;
/// a boolean or a null quotes nothing of anyone's.
fn scalars(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(text) if !text.trim().is_empty() => out.push(text.clone()),
        Value::Number(number) => out.push(number.to_string()),
        Value::Array(items) => items.iter().for_each(|item| scalars(item, out)),
        Value::Object(fields) => fields.values().for_each(|item| scalars(item, out)),
        _ => (),
    }
}

/// Whether `path` lies strictly inside the field at `outer`.
fn within(path: &str, outer: &str) -> bool {
    path.strip_prefix(outer).is_some_and(|rest| rest.starts_with('.'))
}

/// The request fields that ask a route for one page of its answer.
const PAGE_FIELDS: [&str; 4] = ["limit", "offset", "cursor", "k"];

/// The page fields a request carries in its query or body.
fn takes_page(query: &[(&str, String)], body: Option<&Value>) -> Vec<&'static str> {
    let in_body = |field: &str| body.and_then(Value::as_object).is_some_and(|body| body.contains_key(field));
    PAGE_FIELDS
        .into_iter()
        .filter(|field| query.iter().any(|(key, _)| key == field) || in_body(field))
        .collect()
}
