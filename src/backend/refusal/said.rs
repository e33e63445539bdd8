//! A refusal reason that holds JSON text: recognised, so that it is never
//! quoted inside a message, and kept for `detail.said` in a form whose keys
//! the last step can still withhold by name (contract-notes 13 and 26).

use serde_json::Value;

/// Whether a text is, or holds, JSON text: it is, whole, a JSON object or
/// array, or from some `{` of it on one whole JSON object can be read. Only
/// an object names a key, so an array of plain values inside a sentence
/// ("Unknown document ids: [999]") is left in it as its words.
pub(super) fn holds_json(text: &str) -> bool {
    let whole = text.trim_start().starts_with(['{', '[']) && serde_json::from_str::<Value>(text).is_ok();
    whole || json_spans(text).next().is_some()
}

/// The JSON objects a text holds, each as its byte range, in order and not
/// overlapping.
fn json_spans(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut from = 0;
    std::iter::from_fn(move || {
        while let Some(offset) = text[from..].find('{') {
            let start = from + offset;
            let mut values = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
            if let Some(Ok(Value::Object(_))) = values.next() {
                let end = start + values.byte_offset();
                from = end;
                return Some((start, end));
            }
            from = start + 1;
        }
        None
    })
}

/// A reason that holds JSON text, as `detail.said`: the text itself when it
/// is JSON text whole, and otherwise its parts in order, each JSON object
/// in it as a JSON value between the words around it. Either way every key
/// resmon wrote stays a key that the last step (tools/withhold.rs) walks and
/// withholds by name (contract-notes 13), which it cannot do for an object
/// buried in free text.
pub(super) fn said_value(reason: &str) -> Value {
    if serde_json::from_str::<Value>(reason).is_ok() {
        return Value::String(reason.to_string());
    }
    let mut parts = Vec::new();
    let mut at = 0;
    for (start, end) in json_spans(reason) {
        if start > at {
            parts.push(Value::String(reason[at..start].to_string()));
        }
        parts.push(serde_json::from_str(&reason[start..end]).unwrap_or(Value::Null));
        at = end;
    }
    if at < reason.len() {
        parts.push(Value::String(reason[at..].to_string()));
    }
    Value::Array(parts)
}
