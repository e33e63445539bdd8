//! `prompts/get`: the checking of a request's name and arguments against the
//! prompt table, each refusal a sentence that names what was wrong.

use serde_json::{Value, json};

use crate::args::kind_of;

use super::{FORMATS, Kind, MAX_DAYS, MAX_ID, MAX_TEXT_CHARS, PROMPTS, Prompt, Values, find, is_offered};

/// Why `prompts/get` was refused: a sentence, and the argument it names.
#[derive(Debug)]
pub struct Refusal {
    pub message: String,
    pub argument: Option<&'static str>,
}

impl Refusal {
    fn of(argument: &'static str, message: String) -> Refusal {
        Refusal { message, argument: Some(argument) }
    }
}

/// The `prompts/get` result for `params` (name and arguments), or why not.
/// A prompt this session does not offer is refused exactly as a name no
/// prompt has.
pub fn get(params: &Value, read_only: bool) -> Result<Value, Refusal> {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        let message = match params.get("name") {
            None | Some(Value::Null) => "prompts/get needs a prompt name in params.name.".to_string(),
            Some(other) => format!("params.name must be a string, not {}.", kind_of(other)),
        };
        return Err(Refusal { message, argument: None });
    };
    let Some(prompt) = find(name).filter(|prompt| is_offered(prompt, read_only)) else {
        let offered: Vec<&str> =
            PROMPTS.iter().filter(|prompt| is_offered(prompt, read_only)).map(|prompt| prompt.name).collect();
        return Err(Refusal {
            message: format!("unknown prompt {:?}; the prompts are {}.", clip(name), offered.join(", ")),
            argument: None,
        });
    };
    let empty = serde_json::Map::new();
    let given = match params.get("arguments") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(given)) => given,
        Some(other) => {
            return Err(Refusal {
                message: format!(
                    "params.arguments must be an object whose values are strings, not {}.",
                    kind_of(other)
                ),
                argument: None,
            });
        }
    };
    let values = check(prompt, given)?;
    Ok(json!({
        "description": prompt.description,
        "messages": [{"role": "user", "content": {"type": "text", "text": (prompt.text)(&values)}}],
    }))
}

/// Checks every argument given against the prompt's table; one left out
/// stays `None` (the text says what a blank means). An unknown argument is
/// refused before any value is judged.
fn check<'a>(prompt: &Prompt, given: &'a serde_json::Map<String, Value>) -> Result<Values<'a>, Refusal> {
    if let Some(unknown) = given.keys().find(|key| !prompt.arguments.iter().any(|a| a.name == key.as_str())) {
        let takes: Vec<&str> = prompt.arguments.iter().map(|argument| argument.name).collect();
        return Err(Refusal {
            message: format!(
                "prompt {:?} has no argument {:?}; it takes {}.",
                prompt.name,
                clip(unknown),
                takes.join(", ")
            ),
            argument: None,
        });
    }
    let mut values = Vec::with_capacity(prompt.arguments.len());
    for argument in prompt.arguments {
        let text = match given.get(argument.name) {
            None => "",
            // Only white space (Unicode White_Space, which `char::is_whitespace`
            // is) names nothing: a form's field of spaces is a field left blank.
            Some(Value::String(text)) if text.chars().all(char::is_whitespace) => "",
            Some(Value::String(text)) => text.as_str(),
            Some(other) => {
                return Err(Refusal::of(
                    argument.name,
                    format!(
                        "argument {:?} of prompt {:?} must be a string, not {}.",
                        argument.name,
                        prompt.name,
                        kind_of(other)
                    ),
                ));
            }
        };
        if text.is_empty() {
            if argument.required {
                let only_spaces =
                    given.get(argument.name).and_then(Value::as_str).is_some_and(|t| !t.is_empty());
                let given = if only_spaces { ", and the value given is only white space" } else { "" };
                return Err(Refusal::of(
                    argument.name,
                    format!(
                        "prompt {:?} needs the argument {:?}{given} ({})",
                        prompt.name, argument.name, argument.description
                    ),
                ));
            }
            values.push(None);
            continue;
        }
        let value = judge(argument.kind, text)
            .map_err(|why| Refusal::of(argument.name, format!("argument {:?} {why}", argument.name)))?;
        values.push(Some(value));
    }
    Ok(Values { arguments: prompt.arguments, values })
}

/// One value against its kind: its canonical form, or why it is refused
/// (a phrase that follows the argument's name).
pub(super) fn judge(kind: Kind, text: &str) -> Result<std::borrow::Cow<'_, str>, String> {
    use std::borrow::Cow;
    let number = |max: u64, what: &str| -> Result<Cow<'_, str>, String> {
        let bad =
            || format!("must be {what} written in ASCII digits, from 1 to {max}; got {:?}.", clip(text));
        if !text.bytes().all(|byte| byte.is_ascii_digit()) {
            return Err(bad());
        }
        // Leading zeros are allowed and dropped; anything longer than 20
        // digits is out of range whatever it says.
        let value = text.trim_start_matches('0');
        match value.parse::<u64>() {
            Ok(value) if (1..=max).contains(&value) => Ok(Cow::Owned(value.to_string())),
            _ => Err(bad()),
        }
    };
    match kind {
        Kind::Days => number(MAX_DAYS, "a number of days"),
        Kind::Id => number(MAX_ID, "an id"),
        Kind::IdOrName if text.bytes().all(|byte| byte.is_ascii_digit()) => number(MAX_ID, "an id"),
        Kind::IdOrName | Kind::Text => {
            let chars = text.chars().count();
            if chars > MAX_TEXT_CHARS {
                Err(format!("is {chars} characters long; at most {MAX_TEXT_CHARS} are accepted."))
            } else if let Some((at, c, what)) =
                text.chars().enumerate().find_map(|(at, c)| breaks_the_line(c).map(|what| (at + 1, c, what)))
            {
                Err(format!(
                    "must be one line of plain text, but its character {at} is U+{:04X}, {what}; \
                     give the value without it.",
                    u32::from(c)
                ))
            } else {
                Ok(Cow::Borrowed(text))
            }
        }
        Kind::Format => FORMATS
            .iter()
            .find(|format| format.eq_ignore_ascii_case(text))
            .map(|format| Cow::Borrowed(*format))
            .ok_or_else(|| format!("must be one of {}; got {:?}.", FORMATS.join(", "), clip(text))),
    }
}

/// Why a character may not stand in a one-line value, or `None` when it may.
/// A line break would split the prompt's text, and a bidirectional control
/// would make the value, or the text after it, display in another order than
/// it reads (a name that shows one thing to the person and says another).
fn breaks_the_line(c: char) -> Option<&'static str> {
    match c {
        '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}' => Some("a line break"),
        '\u{61C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' => {
            Some("a control that reorders text for display")
        }
        c if c.is_control() => Some("a control character"),
        // The text puts the value in double quotes: one inside would end
        // them, and what follows would read as the text's own words.
        '"' => Some("a double quote, which would end the quotes the text puts around the value"),
        c if is_invisible_format(c) => Some("an invisible formatting character"),
        _ => None,
    }
}

/// Unicode's format characters (general category Cf) that show nothing,
/// and the fillers and the grapheme joiner that show nothing either:
/// a value made of them, or hiding them, reads differently to the person
/// and to the model (a zero-width space, a byte-order mark, tag characters).
/// The zero-width joiner and non-joiner (U+200C, U+200D) are left out: they
/// belong in names written in Persian, Indic scripts and emoji.
fn is_invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{AD}'
            | '\u{34F}'
            | '\u{115F}'
            | '\u{1160}'
            | '\u{3164}'
            | '\u{FFA0}'
            | '\u{600}'..='\u{605}'
            | '\u{6DD}'
            | '\u{70F}'
            | '\u{180E}'
            | '\u{200B}'
            | '\u{2060}'..='\u{2064}'
            | '\u{206A}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{110BD}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0001}'
            | '\u{E0020}'..='\u{E007F}'
    )
}

fn clip(text: &str) -> String {
    text.chars().take(80).collect()
}
