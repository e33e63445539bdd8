//! The tool calls the benchmark measures one by one, each with the HTTP
//! exchange the server makes for it: the floor (`examples/floor.rs`) makes
//! the same exchange for the same line, and `floor --bare` makes only the
//! exchange. `bench` checks against the fake's request log that all three
//! send the same route and body before it measures anything.

use crate::fake_backend::Corpus;

pub struct Call {
    /// Names the call's callgrind runs and files; unique among CALLS.
    pub key: &'static str,
    pub tool: &'static str,
    /// How the figure is labelled.
    pub label: &'static str,
    /// The papers the fake serves for this call.
    pub corpus: Corpus,
    pub arguments: &'static str,
    pub method: &'static str,
    pub path: &'static str,
    /// The request body the server sends for these arguments.
    pub body: Option<&'static str>,
}

/// The first three are measured on the short fixture corpus, as they have
/// been since per-call counts were first taken, so their figures compare
/// across commits; its `search_corpus` page is the query "synthetic", which all 34 papers match
/// (their titles start with "Synthetic"). The last two are the pages
/// contract-notes 24 measures on: the first page of 25 of a query matching
/// at least 25 papers of the realistic slice ("learning" matches 70 of its
/// 120), keyword and semantic. `key` stays the tool's name for the first
/// three because the session figures read their runs by that name.
pub const CALLS: [Call; 5] = [
    Call {
        key: "health",
        tool: "health",
        label: "health",
        corpus: Corpus::Short,
        arguments: "{}",
        method: "GET",
        path: "/api/health",
        body: None,
    },
    Call {
        key: "search_corpus",
        tool: "search_corpus",
        label: "search_corpus, page of 25",
        corpus: Corpus::Short,
        arguments: r#"{"query":"synthetic","limit":25}"#,
        method: "POST",
        path: "/api/explorer/search",
        body: Some(r#"{"query":"synthetic","limit":25,"sort":"newest"}"#),
    },
    Call {
        key: "get_execution",
        tool: "get_execution",
        label: "get_execution 119",
        corpus: Corpus::Short,
        arguments: r#"{"exec_id":119}"#,
        method: "GET",
        path: "/api/executions/119",
        body: None,
    },
    Call {
        key: "search_realistic",
        tool: "search_corpus",
        label: "search_corpus, realistic keyword",
        corpus: Corpus::Realistic,
        arguments: r#"{"query":"learning","limit":25}"#,
        method: "POST",
        path: "/api/explorer/search",
        body: Some(r#"{"query":"learning","limit":25,"sort":"newest"}"#),
    },
    Call {
        key: "search_realistic_semantic",
        tool: "search_corpus",
        label: "search_corpus, realistic semantic",
        corpus: Corpus::Realistic,
        arguments: r#"{"query":"learning","mode":"semantic","limit":25}"#,
        method: "POST",
        path: "/api/explorer/search",
        body: Some(r#"{"query":"learning","limit":25,"sort":"similarity"}"#),
    },
];

/// Wide enough for every label above.
pub const LABEL_WIDTH: usize = 34;

impl Call {
    /// The `tools/call` request line with this id.
    pub fn line(&self, id: usize) -> String {
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"{}\",\"arguments\":{}}}}}\n",
            self.tool, self.arguments
        )
    }

    /// The arguments of `floor --bare`.
    pub fn bare_args(&self) -> Vec<&'static str> {
        let mut args = vec!["--bare", self.method, self.path];
        args.extend(self.body);
        args
    }
}
