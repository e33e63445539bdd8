//! The tool calls the benchmark measures one by one, each with the HTTP
//! exchange the server makes for it: the floor (`examples/floor.rs`) makes
//! the same exchange for the same line, and `floor --bare` makes only the
//! exchange. `bench` checks against the fake's request log that all three
//! send the same route and body before it measures anything.

pub struct Call {
    pub tool: &'static str,
    /// How the figure is labelled.
    pub label: &'static str,
    pub arguments: &'static str,
    pub method: &'static str,
    pub path: &'static str,
    /// The request body the server sends for these arguments.
    pub body: Option<&'static str>,
}

/// `search_corpus` asks for a keyword page of 25 of the fixture corpus, whose
/// titles all start with "Synthetic" (34 papers): the realistic slice of
/// contract-notes 24 is not in the fixtures yet.
pub const CALLS: [Call; 3] = [
    Call { tool: "health", label: "health", arguments: "{}", method: "GET", path: "/api/health", body: None },
    Call {
        tool: "search_corpus",
        label: "search_corpus, page of 25",
        arguments: r#"{"query":"synthetic","limit":25}"#,
        method: "POST",
        path: "/api/explorer/search",
        body: Some(r#"{"query":"synthetic","limit":25,"sort":"newest"}"#),
    },
    Call {
        tool: "get_execution",
        label: "get_execution 119",
        arguments: r#"{"exec_id":119}"#,
        method: "GET",
        path: "/api/executions/119",
        body: None,
    },
];

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
