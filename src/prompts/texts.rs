//! The prompts' texts, one function per prompt, and the two forms the texts
//! are built in without a request: the bundle's template and sample values.

use super::{Kind, MAX_DAYS, MAX_ID, MAX_TEXT_CHARS, Prompt, Values};

// The texts. Each names the tools to call in order and the caveats to keep;
// each says whether it may change anything. Written for a model that has
// the tool list but may not have read every description.
//
// Each value is written once, quoted, and an optional one is followed by
// what a blank stands for: a host that fills in the bundle's template writes
// an omitted argument as nothing, and the text must still read right.
// Claude Code splits a slash command's arguments at every space and keeps
// one word per argument, so a name may arrive cut short: the texts that
// take a name say to check it with the person.

pub(super) fn recent(values: &Values) -> String {
    let days = values.given("days");
    let routine = values.given("routine");
    format!(
        "What did my resmon routines find lately? Days back: \"{days}\" (blank means 7). Routine: \
         \"{routine}\" (blank means every routine; all digits: its id; else a name, maybe only its first word, \
         as some harnesses pass one word).\n\
         1. list_routines: names and ids, and missed_fires. For a name, find the routines it could mean; if \
         none, or more than one, show me the candidates and ask which.\n\
         2. list_executions (with routine_id for one routine): runs newest first; keep those started in the \
         window (page with offset).\n\
         3. Per run: get_execution (status, per-source coverage), then get_execution_results (its papers).\n\
         Report per routine: its runs, then the new papers (title, date, doc_id). Keep it honest:\n\
         - interrupted means resmon stopped mid-run (e.g. the app was closed), not that the search failed;\n\
         - a source that did not answer, or answered in part, did not find nothing: name it and give \
         resmon's zero-reason;\n\
         - missed_fires are runs that never happened because resmon was closed.\n\
         Pass on resmon's caveats as given. Only read: change nothing."
    )
}

pub(super) fn checkup(values: &Values) -> String {
    let days = values.given("days");
    format!(
        "Is my resmon monitoring healthy? Days back: \"{days}\" (blank means 7).\n\
         1. health: is resmon reachable, and what state are its scheduler and daemon in? If it is not \
         reachable, say what its message says to do, and stop.\n\
         2. get_watchdog_findings: only severity broken or unusual is an alarm; pass on what_to_do and \
         not_enough_data.\n\
         3. list_routines: active routines with missed_fires (fires due while resmon was closed).\n\
         4. list_executions with status failed, then with status interrupted: runs started in the window. \
         get_execution says why a run failed.\n\
         Then a short verdict, problems first. An interrupted run was cut off by the app stopping; it is \
         not a failed search, so do not count it as one. A source that did not answer is not a source \
         that found nothing. Only read: if something should be run or switched, tell me what I could do."
    )
}

pub(super) fn person(values: &Values) -> String {
    let person = values.given("person");
    format!(
        "Which papers has resmon matched to the watched person \"{person}\"? All digits: a watch profile id; \
         else a name, maybe only its first word, as some harnesses pass one word.\n\
         1. list_watch_profiles with kind person: find the profiles it could mean; if none, or more than \
         one, show me the candidates and ask which. Note the profile's basis_warning.\n\
         2. get_profile_matches (page with offset): per paper, title, date, doc_id, basis and \
         matched_author.\n\
         Group the papers by basis. An identifier match rests on an ID; name+affiliation on the name and \
         an affiliation. A name_only match only means the name is on the paper: never call it this \
         person's paper; say it may be someone else's. Repeat basis_warning and what_a_basis_means as \
         resmon gives them. Only read: change nothing."
    )
}

pub(super) fn paper(values: &Values) -> String {
    let doc_id = values.given("doc_id");
    format!(
        "Tell me about paper {doc_id} in resmon: why it matched, and what has happened to it since.\n\
         1. explain_match: which keywords matched and where, resmon's verdict, the runs that found it. \
         Pass on what_resmon_cannot_see. No keyword match is normal for sources that rank by relevance.\n\
         2. get_paper_lifecycle: retraction, published version, new versions, with notice links. \
         checked_at null means it was never checked, so no events proves nothing; check_status error or \
         no_identifier means the check could not tell.\n\
         Lead with a retraction if there is one. Add nothing resmon did not say. Only read: change nothing."
    )
}

pub(super) fn export(values: &Values) -> String {
    let exec_id = values.given("exec_id");
    let format = values.given("format");
    format!(
        "Export the references of resmon run {exec_id} for my reference manager. Format: \"{format}\" \
         (blank means bibtex).\n\
         1. get_execution with exec_id {exec_id}: if the run is still running, or was interrupted, say \
         the list may be incomplete (interrupted is not failed).\n\
         2. export_references with exec_id {exec_id} and that format.\n\
         Give me the text exactly as returned, in one code block, with resmon's count, and suggest a file \
         name (.bib for bibtex, else .ris, .csv or .json). Do not edit, reorder or complete entries. Only \
         read: change nothing."
    )
}

pub(super) fn watch(values: &Values) -> String {
    let name = values.given("name");
    format!(
        "Help me start watching \"{name}\" in resmon. Some harnesses pass only an argument's first word, so \
         this may not be the whole name: first ask me for the person's full name and use that.\n\
         1. list_watch_profiles: if a profile for this person exists, show it and stop.\n\
         2. Ask me for the person's ORCID and where it is cited. With one, matches can rest on the \
         identifier; with a name alone every match is name_only, which may be another person's paper.\n\
         3. Show me the create_watch_profile call you would make (the full name I confirmed, orcid, \
         orcid_cited) and wait for my yes: it changes resmon. Then repeat resmon's basis_warning."
    )
}

/// The text with every argument standing as `${arguments.<name>}`, the
/// placeholder an MCP Bundle manifest's prompt text uses: what the bundle
/// declares, and what `prompts/get` answers once each is replaced by a
/// value it accepts.
pub fn template_text(prompt: &Prompt) -> String {
    let values = prompt
        .arguments
        .iter()
        .map(|argument| Some(std::borrow::Cow::Owned(format!("${{arguments.{}}}", argument.name))))
        .collect();
    (prompt.text)(&Values { arguments: prompt.arguments, values })
}

/// The text for sample values: with `longest`, every argument at the
/// longest value it accepts (free text as 100 four-byte characters); else
/// only the required ones, given as short values.
pub(crate) fn sample_text(prompt: &Prompt, longest: bool) -> String {
    let values = prompt
        .arguments
        .iter()
        .map(|argument| {
            let sample = match (argument.kind, longest) {
                (_, false) if !argument.required => return None,
                (Kind::Days, _) => MAX_DAYS.to_string(),
                (Kind::Id, true) => MAX_ID.to_string(),
                (Kind::Id, false) => "7".to_string(),
                (Kind::IdOrName | Kind::Text, true) => "\u{1D538}".repeat(MAX_TEXT_CHARS),
                (Kind::IdOrName | Kind::Text, false) => "Ada Lovelace".to_string(),
                (Kind::Format, _) => "bibtex".to_string(),
            };
            Some(std::borrow::Cow::Owned(sample))
        })
        .collect();
    (prompt.text)(&Values { arguments: prompt.arguments, values })
}
