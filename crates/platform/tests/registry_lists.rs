//! The registry (`Registry::builtin`) is the only list of job and task kinds; the lists the
//! chart and the service contract hold must be what it says. A hand-kept list in the chart
//! schema once refused worker pools for 6 of the 11 worker task kinds.
//!
//! Also `docs/configuration.md`, generated from the service flags.
//!
//! Regenerate after adding a kind: the chart schema's `workerPools[].kinds` enum is
//! `prover kinds --json`'s worker task kinds; `docs/service-contract.md` holds `prover kinds`
//! verbatim between its `registry:begin` and `registry:end` markers.

use std::path::Path;

use platform::kinds::{Registry, Served};

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// Every `enum` under a property named `kinds` in a JSON schema, with its path.
fn kinds_enums(v: &serde_json::Value, path: &str, out: &mut Vec<(String, Vec<String>)>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, child) in m {
                let here = format!("{path}/{k}");
                if k == "kinds" {
                    if let Some(e) = child["items"]["enum"].as_array() {
                        out.push((here.clone(), e.iter().map(|s| s.as_str().unwrap().to_string()).collect()));
                    }
                }
                kinds_enums(child, &here, out);
            }
        }
        serde_json::Value::Array(a) => a.iter().enumerate().for_each(|(i, c)| kinds_enums(c, &format!("{path}/{i}"), out)),
        _ => {}
    }
}

#[test]
fn the_chart_accepts_a_pool_for_every_worker_task_kind() {
    let registry = Registry::builtin();
    let worker: Vec<String> = registry.served_by(Served::Worker).iter().map(|t| t.name.to_string()).collect();
    assert!(worker.len() >= 11, "the registry lists {} worker task kinds: {worker:?}", worker.len());
    let schema: serde_json::Value = serde_json::from_slice(&std::fs::read(root().join("helm/prover/values.schema.json")).unwrap()).unwrap();
    let mut enums = Vec::new();
    kinds_enums(&schema, "", &mut enums);
    assert!(!enums.is_empty(), "no task-kind enum found in the chart schema");
    for (path, kinds) in enums {
        assert_eq!(kinds, worker, "helm/prover/values.schema.json {path}: the task kinds a worker pool may name must be the registry's worker task kinds (`prover kinds --json`)");
    }
}

/// The text of `file` between its `begin` and `end` markers.
fn marked(file: &str, begin: &str, end: &str) -> String {
    let text = std::fs::read_to_string(root().join(file)).unwrap();
    let a = text.find(begin).unwrap_or_else(|| panic!("{file} has no marker {begin:?}")) + begin.len();
    let b = text[a..].find(end).unwrap_or_else(|| panic!("{file} has no marker {end:?}")) + a;
    text[a..b].to_string()
}

#[test]
fn the_service_contract_lists_the_registry() {
    let text = marked("docs/service-contract.md", "<!-- registry:begin (prover kinds) -->\n```text\n", "```\n<!-- registry:end -->");
    assert_eq!(text, Registry::builtin().table(), "docs/service-contract.md: the task-kind table differs from `prover kinds`");
}

#[test]
fn the_operations_guide_lists_the_limits() {
    let text = marked("docs/operations.md", "<!-- limits:begin (prover limits --local) -->\n", "<!-- limits:end -->");
    let want = platform::limits::table(&platform::grpc::limits_to_pb(&platform::PlatformConfig::default()));
    assert_eq!(text, want, "docs/operations.md: the limits differ from `prover limits --local`");
}

/// `describe` is consistent with the lookups the roles use.
#[test]
fn the_description_is_the_registry() {
    let registry = Registry::builtin();
    let d = registry.describe();
    for k in d["job_kinds"].as_array().unwrap() {
        let name = k["name"].as_str().unwrap();
        assert!(registry.job_kind(name).is_some(), "{name}");
        for t in k["task_kinds"].as_array().unwrap() {
            assert!(registry.task(t.as_str().unwrap()).is_some(), "{name}: {t}");
        }
    }
    let names: Vec<&str> = d["task_kinds"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, registry.task_kinds().iter().map(|t| t.name).collect::<Vec<_>>());
}

/// `docs/configuration.md` is what the flags say (`prover configuration > docs/configuration.md`).
#[test]
fn the_configuration_page_is_generated_from_the_flags() {
    let committed = std::fs::read_to_string(root().join("docs/configuration.md")).unwrap_or_default();
    assert!(
        committed == platform::service::configuration_markdown(),
        "docs/configuration.md differs from the flags; regenerate with `prover configuration > docs/configuration.md`"
    );
}

/// Job kinds and task kinds are separate namespaces: no name is both (`--task-deadline` and
/// `--job-expected` would otherwise name different things with one word; once `hekaton.prove`
/// and `noop` were both).
#[test]
fn no_name_is_both_a_job_kind_and_a_task_kind() {
    let registry = Registry::builtin();
    let tasks: Vec<&str> = registry.task_kinds().iter().map(|t| t.name).collect();
    for k in registry.job_kinds() {
        assert!(!tasks.contains(&k.name()), "{} is both a job kind and a task kind", k.name());
    }
}
