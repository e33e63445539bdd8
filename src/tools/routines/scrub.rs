//! The scrubbing of a routine's `last_error`: owns the rule that takes out
//! anything shaped like an address, host, path or URL before the text
//! leaves (backend-facts 8), and knows nothing of routes or schemas.

/// resmon's adapters already scrub `last_error` (backend-facts 8),
/// but contract 1.0 promises no address, path or URL at all, so anything of
/// those shapes an older or careless adapter left is replaced here too. When
/// a word could be either a destination or prose, it is removed: a lost word
/// costs less than a leaked address.
pub(in crate::tools) fn scrub_destinations(text: &str) -> String {
    let is_boundary = |c: char| c.is_whitespace() || "\"'()[]{}<>,;`".contains(c);
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    // Set by a word ending in a destination key and `=` (`host=`): the value
    // quoted right after it (`host='mailhost'`) is a destination whatever
    // its shape, even a bare name with no dot.
    let mut after_key = false;
    for c in text.chars() {
        if is_boundary(c) {
            push_scrubbed(&word, &mut after_key, &mut out);
            word.clear();
            if !"\"'`".contains(c) {
                after_key = false;
            }
            out.push(c);
        } else {
            word.push(c);
        }
    }
    push_scrubbed(&word, &mut after_key, &mut out);
    out
}

fn push_scrubbed(word: &str, after_key: &mut bool, out: &mut String) {
    if word.is_empty() {
        return;
    }
    if std::mem::take(after_key) && word.chars().any(char::is_alphanumeric) {
        let core = word.trim_end_matches(TRAILING);
        out.push_str("<target>");
        out.push_str(&word[core.len()..]);
    } else {
        out.push_str(&scrub_word(word));
    }
    *after_key = word.strip_suffix('=').is_some_and(names_destination);
}

/// Punctuation that ends a sentence or a clause after a word; it stays
/// outside what is replaced (`lookup <target>: no such host`).
const TRAILING: [char; 4] = ['.', ':', '!', '?'];

fn scrub_word(word: &str) -> String {
    let core = word.trim_end_matches(TRAILING);
    let tail = &word[core.len()..];
    let replaced = |with: &str| format!("{with}{tail}");
    // An IPv6 address may end in `::`, which is not punctuation.
    let bare = word.trim_end_matches(['.', '!', '?']);
    if is_ipv6(core) {
        return replaced("<target>");
    }
    if is_ipv6(bare) {
        return format!("<target>{}", &word[bare.len()..]);
    }
    if core.contains("://") || core.get(..7).is_some_and(|scheme| scheme.eq_ignore_ascii_case("mailto:")) {
        return replaced("<target>");
    }
    // `key=value`: the key stays readable; the value is judged on its own,
    // and after a key that names a destination it goes whatever its shape.
    if let Some((key, value)) = core.split_once('=') {
        let value = if names_destination(key) && value.chars().any(char::is_alphanumeric) {
            "<target>".to_string()
        } else {
            scrub_word(value)
        };
        return format!("{}={value}{tail}", scrub_word(key));
    }
    // Any user or host around an `@` is part of an address, dotted or not
    // (`reader@localhost`, `root@mailhost`).
    if let Some((user, host)) = core.split_once('@')
        && (user.chars().any(char::is_alphanumeric) || host.chars().any(char::is_alphanumeric))
    {
        return replaced("<address>");
    }
    let path_like = core.contains('/') || core.contains('\\') || core.starts_with('~');
    if path_like && core.chars().any(char::is_alphanumeric) {
        return replaced("<target>");
    }
    // `hooks.example.net:443`, `smtp:MAIL.CORP.LOCAL`: a host in any part.
    if core.split(':').any(is_host) {
        return replaced("<target>");
    }
    word.to_string()
}

/// Keys whose value says where something went or came from; a compound
/// key counts by its last part (`smtp_host`, `webhook-url`).
const DESTINATION_KEYS: &[&str] = &[
    "host",
    "hostname",
    "server",
    "relay",
    "peer",
    "endpoint",
    "domain",
    "addr",
    "address",
    "email",
    "mail",
    "to",
    "cc",
    "bcc",
    "from",
    "sender",
    "rcpt",
    "recipient",
    "recipients",
    "url",
    "uri",
    "webhook",
    "dest",
    "destination",
    "target",
    "path",
    "file",
    "filename",
    "folder",
    "dir",
    "directory",
];

fn names_destination(key: &str) -> bool {
    let last = key.rsplit(['_', '-', '.']).next().unwrap_or(key);
    DESTINATION_KEYS.iter().any(|name| last.eq_ignore_ascii_case(name))
}

/// An IPv6 address (`2001:db8::1`, `fe80::1%eth0`, `::ffff:10.0.0.5`): hex
/// groups of at most four digits between colons, an IPv4 tail allowed, a
/// zone after `%`. A clock time (`10:30:00`) has the digits but none of the
/// marks (`::`, a hex letter, a zone, six or more groups), so it stays.
fn is_ipv6(text: &str) -> bool {
    let (address, zone) = match text.split_once('%') {
        Some((address, zone)) => (address, Some(zone)),
        None => (text, None),
    };
    let zone_ok = |zone: &str| {
        !zone.is_empty() && zone.chars().all(|c| c.is_ascii_alphanumeric() || "_-.:".contains(c))
    };
    if zone.is_some_and(|zone| !zone_ok(zone)) {
        return false;
    }
    let groups: Vec<&str> = address.split(':').collect();
    let Some((last, rest)) = groups.split_last() else { return false };
    if groups.len() < 3 || groups.len() > 9 {
        return false;
    }
    let hex_group = |group: &str| group.len() <= 4 && group.chars().all(|c| c.is_ascii_hexdigit());
    if !rest.iter().all(|group| hex_group(group)) || !(hex_group(last) || is_ipv4(last)) {
        return false;
    }
    address.contains("::")
        || zone.is_some()
        || groups.len() >= 6
        || address.chars().any(|c| c.is_ascii_alphabetic())
}

fn is_ipv4(text: &str) -> bool {
    let labels: Vec<&str> = text.split('.').collect();
    labels.len() == 4
        && labels
            .iter()
            .all(|label| (1..=3).contains(&label.len()) && label.chars().all(|c| c.is_ascii_digit()))
}

/// A host name (`hooks.example.net`, `Hooks.Example.COM`, `MAIL.CORP.LOCAL`)
/// or an IPv4 address: either names where a report went. Host names are
/// matched without regard to case, as DNS treats them. The one dotted form
/// that is left alone is a qualified class name (`requests.exceptions.ConnectTimeout`):
/// lowercase module labels, then a CamelCase name with a capital inside it,
/// which no one writes a top-level domain as.
fn is_host(text: &str) -> bool {
    let labels: Vec<&str> = text.split('.').collect();
    if labels.len() < 2 || labels.iter().any(|label| label.is_empty()) {
        return false;
    }
    let numeric = labels.iter().all(|label| label.chars().all(|c| c.is_ascii_digit()));
    if numeric {
        return labels.len() == 4;
    }
    let tld = labels[labels.len() - 1];
    let plain = |label: &&str| label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    let host_shaped =
        labels.iter().all(plain) && tld.len() >= 2 && tld.chars().all(|c| c.is_ascii_alphabetic());
    host_shaped && !is_qualified_name(&labels)
}

/// `module.sub.ClassName`: every label but the last is lowercase, and the
/// last starts with a capital and has another capital after a later letter
/// (`ConnectTimeout`, `SMTPRecipientsRefused`, `SSLError`).
fn is_qualified_name(labels: &[&str]) -> bool {
    let Some((name, modules)) = labels.split_last() else { return false };
    let lowercase = |label: &&str| !label.chars().any(|c| c.is_ascii_uppercase());
    let mut letters = name.chars();
    let starts_capital = letters.next().is_some_and(|c| c.is_ascii_uppercase());
    let rest: Vec<char> = letters.collect();
    let has_lower = rest.iter().any(char::is_ascii_lowercase);
    let inner_capital = rest.iter().any(char::is_ascii_uppercase);
    modules.iter().all(lowercase) && starts_capital && has_lower && inner_capital
}
