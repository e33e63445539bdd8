//! Throwaway: asks the computing fake, on a fresh state each time, for the
//! answer to every request the tests make (target/dump/requests.json), and
//! writes what it answered to target/dump/answers.jsonl.
#[path = "../tests/support/fake_backend.rs"]
mod fake_backend;

use fake_backend::http::Request;
use fake_backend::routes::{Ctx, dispatch};
use fake_backend::{Corpus, State};
use serde_json::{Value, json};
use std::io::Write;

fn fresh(context: &Value) -> State {
    let corpus = if context["corpus"] == "realistic" { Corpus::Realistic } else { Corpus::Short };
    let mut st = State::load_with(corpus);
    if context["embeddings"] == false {
        st.embeddings_configured = false;
    }
    if context["release"] == "older" {
        st.version = "2.1.0".into();
        st.reports_identity = false;
        st.dropped_on_create = vec!["intent".into()];
        st.formats_unknown = vec!["json".into()];
    }
    st
}

fn request(method: &str, path: &str, pairs: &Value, body: &str) -> Request {
    let query_pairs: Vec<(String, String)> = pairs
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_str().unwrap().to_string(), p[1].as_str().unwrap().to_string()))
        .collect();
    Request {
        method: method.into(),
        path: path.into(),
        query: String::new(),
        query_pairs,
        version: "HTTP/1.1".into(),
        headers: vec![],
        body: body.as_bytes().to_vec(),
    }
}

fn answer(st: &mut State, req: &Request) -> Value {
    let ctx = Ctx {
        port: 1,
        runtime_id: "ffffffff-ffff-4fff-bfff-ffffffffffff",
        started_at: "2000-01-01T00:00:00.000000+00:00",
        pid: 1,
    };
    let resp = dispatch(st, &ctx, req);
    json!({"status": resp.status, "headers": resp.headers, "body": String::from_utf8(resp.body).unwrap()})
}

fn main() {
    let reqs: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string("target/dump/requests.json").unwrap()).unwrap();
    let mut out = std::fs::File::create("target/dump/answers.jsonl").unwrap();
    for r in &reqs {
        let mut st = fresh(&r["context"]);
        let method = r["method"].as_str().unwrap();
        let path = r["path"].as_str().unwrap();
        let req = request(method, path, &r["query_pairs"], r["body"].as_str().unwrap());
        let mut line = json!({"context": r["context"], "method": method, "path": path,
                              "query_pairs": r["query_pairs"], "body": r["body"]});
        if method == "PUT" {
            let get = request("GET", path, &json!([]), "");
            line["before"] = answer(&mut st, &get);
            line["answer"] = answer(&mut st, &req);
            line["after"] = answer(&mut st, &get);
        } else if method == "POST" && path == "/api/routines" {
            let n = st.routines.len();
            line["answer"] = answer(&mut st, &req);
            line["row"] = st.routines.get(n).cloned().unwrap_or(Value::Null);
        } else {
            line["answer"] = answer(&mut st, &req);
        }
        writeln!(out, "{line}").unwrap();
    }
    let mut st = fresh(&json!({}));
    let execs = answer(&mut st, &request("GET", "/api/executions", &json!([["limit", "500"]]), ""));
    let profiles = answer(&mut st, &request("GET", "/api/profiles", &json!([]), ""));
    let records = json!({
        "executions": serde_json::from_str::<Value>(execs["body"].as_str().unwrap()).unwrap(),
        "profiles": serde_json::from_str::<Value>(profiles["body"].as_str().unwrap()).unwrap()["profiles"],
    });
    std::fs::write("target/dump/records.json", serde_json::to_string(&records).unwrap()).unwrap();
    eprintln!("{} answers", reqs.len());
}
