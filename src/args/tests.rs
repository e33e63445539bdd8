//! The argument check's unit tests: names, kinds, integers and ranges, the
//! keys a harness adds, and keys given twice.

use super::*;
use crate::error::Code;
use serde_json::json;

fn schema() -> Value {
    json!({"type": "object", "properties": {
        "query": {"type": "string"},
        "mode": {"type": "string", "enum": ["keyword", "semantic"]},
        "limit": {"type": "integer", "minimum": 1},
        "sources": {"type": "array", "items": {"type": "string"}},
        "entity": {"type": "object", "properties": {"profile_id": {"type": "integer"}}, "required": ["profile_id"]}
    }, "required": ["query"]})
}

fn refused_argument(arguments: Value) -> String {
    let error = validate(&schema(), &arguments).unwrap_err();
    assert_eq!(error.code, Code::InvalidArgument);
    error.detail["argument"].as_str().unwrap().to_string()
}

#[test]
fn accepts_a_valid_call() {
    validate(&schema(), &json!({"query": "x", "mode": "semantic", "limit": 5, "sources": ["arxiv"]}))
        .unwrap();
    validate(&schema(), &json!({"query": "x", "limit": null})).unwrap();
}

#[test]
fn names_the_argument_it_refuses() {
    assert_eq!(refused_argument(json!({})), "query");
    assert_eq!(refused_argument(json!({"query": 3})), "query");
    assert_eq!(refused_argument(json!({"query": "x", "mode": "fuzzy"})), "mode");
    assert_eq!(refused_argument(json!({"query": "x", "limit": 2.5})), "limit");
    assert_eq!(refused_argument(json!({"query": "x", "limit": 0})), "limit");
    assert_eq!(refused_argument(json!({"query": "x", "limit": u64::MAX})), "limit");
    assert_eq!(refused_argument(json!({"query": "x", "sources": ["a", 1]})), "sources[1]");
    assert_eq!(refused_argument(json!({"query": "x", "offset": 5})), "offset");
    assert_eq!(refused_argument(json!({"query": "x", "entity": 5})), "entity");
    // Inside a nested object nothing is judged here: resmon judges `entity`.
    validate(&schema(), &json!({"query": "x", "entity": {"profile_id": "p", "x": 1}})).unwrap();
    assert_eq!(validate(&schema(), &json!([1])).unwrap_err().code, Code::InvalidArgument);
    let no_arguments = json!({"type": "object", "properties": {}});
    assert_eq!(validate(&no_arguments, &json!({"x": 1})).unwrap_err().detail["argument"], "x");
    let open_map = json!({"type": "object", "properties": {"settings": {"type": "object"}}});
    validate(&open_map, &json!({"settings": {"any_key": "v"}})).unwrap();
}

fn refusal(arguments: Value) -> ToolError {
    validate(&schema(), &arguments).unwrap_err()
}

fn ids_schema() -> Value {
    json!({"type": "object", "properties": {
        "routine_id": {"type": "integer"},
        "doc_ids": {"type": "array", "items": {"type": "integer"}},
        "offset": {"type": "integer", "minimum": 0},
        "top": {"type": "integer", "minimum": 1, "maximum": 10}
    }})
}

/// An integer is one by value: written with a zero fraction part or an
/// exponent it is taken, and read (and so sent) as the integer.
#[test]
fn an_integer_written_as_a_float_is_that_integer() {
    for (written, read) in [
        (json!(1.0), 1i64),
        (json!(2e0), 2),
        (json!(25.000), 25),
        (json!(9_007_199_254_740_992.0), 9_007_199_254_740_992i64),
    ] {
        let arguments = json!({"query": "x", "limit": written});
        let accepted = accepted(&schema(), &arguments).unwrap();
        assert!(accepted["limit"].is_i64(), "{written}");
        assert_eq!(accepted["limit"], json!(read), "{written}");
        assert_eq!(accepted["query"], "x");
    }
    // Inside an array of ids too, each item in its place.
    let arguments = json!({"doc_ids": [3, 4.0, 5]});
    let accepted = accepted(&ids_schema(), &arguments).unwrap();
    assert_eq!(accepted.to_string(), r#"{"doc_ids":[3,4,5]}"#);
    // Written as an integer, the arguments are not copied.
    let arguments = json!({"query": "x", "limit": 3});
    assert!(matches!(accepted_borrowed(&arguments), Cow::Borrowed(_)));
    // `minimum` applies to the integer read: 0.0 is 0.
    assert_eq!(refused_argument(json!({"query": "x", "limit": 0.0})), "limit");
}

fn accepted_borrowed(arguments: &Value) -> Cow<'_, Value> {
    accepted(&schema(), arguments).unwrap()
}

/// Only a true fraction is called fractional; a number too large is
/// told as outside the range, which the sentence gives.
#[test]
fn each_integer_refusal_gives_the_true_reason() {
    let fraction = refusal(json!({"query": "x", "limit": 1.5}));
    assert!(fraction.message.contains("not a fractional number (1.5)"), "{}", fraction.message);
    for too_large in
        [json!(18_446_744_073_709_551_616.0), json!(u64::MAX), json!(9_223_372_036_854_775_808u64)]
    {
        let error = refusal(json!({"query": "x", "limit": too_large}));
        assert_eq!(error.detail["argument"], "limit");
        assert!(
            error.message.contains("must be an integer of at least 1; ")
                && error.message.ends_with(
                    "is larger than 9223372036854775807 (2^63 − 1), the largest integer resmon stores."
                ),
            "{too_large}: {}",
            error.message
        );
        assert!(!error.message.contains("fractional"), "{}", error.message);
        assert_eq!(
            (error.detail["minimum"].clone(), error.detail["maximum"].clone()),
            (json!(1), json!(i64::MAX))
        );
    }
    let negative = refusal(json!({"query": "x", "limit": -18_446_744_073_709_551_616.0}));
    assert!(negative.message.contains("is smaller than any integer resmon stores"), "{}", negative.message);
    // The largest integer an argument holds is taken.
    validate(&schema(), &json!({"query": "x", "limit": i64::MAX})).unwrap();
    // Past 2^53 a number written with an exponent may not be the one meant.
    let inexact = refusal(json!({"query": "x", "limit": 1e17}));
    assert!(inexact.message.contains("plain digits"), "{}", inexact.message);
    // A `maximum` in the schema is the range's top.
    let top = validate(&ids_schema(), &json!({"top": 11})).unwrap_err();
    assert!(top.message.contains("from 1 to 10; got 11"), "{}", top.message);
    validate(&ids_schema(), &json!({"top": 10.0})).unwrap();
    // Another kind is named as what it is: `1.0` is an integer, not a fraction.
    let kind = refusal(json!({"query": 1.0}));
    assert!(kind.message.contains("must be a string, not an integer"), "{}", kind.message);
}

/// An id is 1 to 2^63 − 1, whether or not its schema gives a `minimum`.
#[test]
fn an_id_is_one_to_the_largest_integer() {
    for (arguments, argument) in [
        (json!({"routine_id": 0}), "routine_id"),
        (json!({"routine_id": -3}), "routine_id"),
        (json!({"routine_id": -0.0}), "routine_id"),
        (json!({"routine_id": 18_446_744_073_709_551_616.0}), "routine_id"),
        (json!({"doc_ids": [1, 0]}), "doc_ids[1]"),
    ] {
        let error = validate(&ids_schema(), &arguments).unwrap_err();
        assert_eq!(error.detail["argument"], argument, "{arguments}");
        assert!(
            error.message.contains("must be an id, an integer from 1 to 9223372036854775807"),
            "{arguments}: {}",
            error.message
        );
    }
    validate(&ids_schema(), &json!({"routine_id": 1, "doc_ids": [i64::MAX]})).unwrap();
    // Not an id: its own `minimum` holds.
    validate(&ids_schema(), &json!({"offset": 0})).unwrap();
    let offset = validate(&ids_schema(), &json!({"offset": -1})).unwrap_err();
    assert!(offset.message.contains("must be an integer of at least 0; got -1"), "{}", offset.message);
}

#[test]
fn keys_a_harness_adds_are_accepted_with_any_value_and_nothing_else_is() {
    for entry in HARNESS_KEYS {
        for value in [json!(true), json!(false), json!(null), json!("yes")] {
            validate(&schema(), &json!({"query": "x", entry.key: value})).unwrap();
        }
        let no_arguments = json!({"type": "object", "properties": {}, "additionalProperties": false});
        validate(&no_arguments, &json!({entry.key: true})).unwrap();
        // The exemption does not hide a real mistake beside it.
        let error = validate(&schema(), &json!({"query": "x", entry.key: true, "wait": true})).unwrap_err();
        assert_eq!(error.detail["argument"], "wait");
        // Nor does it stop the required check.
        assert_eq!(refused_argument(json!({entry.key: true})), "query");
    }
    // A near miss is still somebody's mistake, named as such.
    assert_eq!(refused_argument(json!({"query": "x", "wait_for_previous_": true})), "wait_for_previous_");
    assert_eq!(refused_argument(json!({"query": "x", "WAIT_FOR_PREVIOUS": true})), "WAIT_FOR_PREVIOUS");
}

#[test]
fn docs_setup_names_every_harness_key_and_its_harness() {
    let setup = include_str!("../../docs/setup.md");
    for entry in HARNESS_KEYS {
        let line = setup.lines().find(|line| line.contains(&format!("`{}`", entry.key)));
        let line = line.unwrap_or_else(|| panic!("docs/setup.md does not name `{}`", entry.key));
        assert!(
            line.contains(entry.harness),
            "docs/setup.md names `{}` without {}",
            entry.key,
            entry.harness
        );
    }
}

#[test]
fn a_tool_that_declares_a_harness_key_has_it_checked() {
    let declares = json!({"type": "object", "properties": {"wait_for_previous": {"type": "integer"}}});
    assert_eq!(
        validate(&declares, &json!({"wait_for_previous": true})).unwrap_err().detail["argument"],
        "wait_for_previous"
    );
}

fn repeats_refused(text: &str) -> Option<ToolError> {
    refuse_repeats(&Repeats::in_object(text.as_bytes())).err()
}

/// A key given twice is refused by name, equal values or not, at the top
/// and inside an object argument (settings, entity); deeper than that the
/// arguments hold no object.
#[test]
fn a_key_given_twice_is_refused_by_name() {
    for (text, argument) in [
        (r#"{"group": "ai", "group": "email"}"#, "group"),
        (r#"{"group": "ai", "group": "ai"}"#, "group"),
        (
            r#"{"group": "ai", "settings": {"ai_model": "a", "ai_effort": "b", "ai_model": "c"}}"#,
            "settings.ai_model",
        ),
        (r#"{"wait_for_previous": true, "wait_for_previous": false}"#, "wait_for_previous"),
        (r#"{"nothing_declared": 1, "nothing_declared": 1}"#, "nothing_declared"),
        (r#"{"entity": {"profile_id": 1, "profile_id": 2}}"#, "entity.profile_id"),
    ] {
        let error = repeats_refused(text).unwrap_or_else(|| panic!("{text} was not refused"));
        assert_eq!(error.code, Code::InvalidArgument);
        assert_eq!(error.detail["argument"], argument, "{text}");
        assert!(error.message.contains("given 2 times"), "{}", error.message);
        assert!(error.message.contains("nothing was sent"), "{}", error.message);
    }
    let thrice =
        repeats_refused(r#"{"group": 1, "settings": {"k": 1, "k": 2, "k": 3}, "group": 2}"#).unwrap();
    assert_eq!(thrice.detail["argument"], "group", "the top level first");
    assert_eq!(thrice.detail["given_twice"], json!(["group", "settings.k"]));
    let inside = repeats_refused(r#"{"settings": {"k": 1, "k": 2, "k": 3}}"#).unwrap();
    assert!(inside.message.contains("`k` is given 3 times in `settings`"), "{}", inside.message);
    for text in [
        r#"{"group": "ai", "settings": {"ai_model": "a"}}"#,
        r#"{"settings": {"inner": {"k": 1, "k": 2}}}"#,
        r#"{"group": "ai", "settings": "not an object"}"#,
    ] {
        assert!(repeats_refused(text).is_none(), "{text}");
    }
}
