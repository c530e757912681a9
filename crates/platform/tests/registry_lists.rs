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

/// One field of `jobs.proto`: its message, name and the comment above it.
struct ProtoField {
    message: String,
    name: String,
    comment: String,
}

/// The fields of `proto/prover/v1/jobs.proto` with their comments, and its `rpc` names (a
/// line reader for this file's plain layout: top-level messages, `oneof` blocks inside them).
fn proto() -> (Vec<ProtoField>, Vec<String>) {
    let text = std::fs::read_to_string(root().join("proto/prover/v1/jobs.proto")).unwrap();
    let (mut fields, mut rpcs) = (Vec::new(), Vec::new());
    let (mut message, mut comment) = (String::new(), Vec::<String>::new());
    for line in text.lines().map(str::trim) {
        if let Some(c) = line.strip_prefix("//") {
            comment.push(c.trim().to_string());
            continue;
        }
        if let Some(rest) = line.strip_prefix("message ") {
            message = rest.trim_end_matches('{').trim().to_string();
        } else if let Some(rest) = line.strip_prefix("rpc ") {
            rpcs.push(rest.split('(').next().unwrap().trim().to_string());
        } else if let Some((decl, _)) = line.split_once('=') {
            let words: Vec<&str> = decl.split_whitespace().collect();
            if words.len() >= 2 && line.ends_with(';') {
                let name = words[words.len() - 1].to_string();
                fields.push(ProtoField { message: message.clone(), name, comment: comment.join(" ") });
            }
        }
        comment.clear();
    }
    (fields, rpcs)
}

/// Every number a comment gives as "at most N" (any case; digits with commas, optionally KiB/MiB/GiB).
fn at_most(comment: &str) -> Vec<u64> {
    let mut out = Vec::new();
    let comment = comment.to_lowercase();
    for (i, _) in comment.match_indices("at most ") {
        let rest = &comment[i + "at most ".len()..];
        let digits: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == ',').collect();
        let digits = digits.trim_end_matches(',');
        let Ok(n) = digits.replace(',', "").parse::<u64>() else { continue };
        let unit = rest[digits.len()..].trim_start();
        let scale = [("kib", 1u64 << 10), ("mib", 1 << 20), ("gib", 1 << 30)]
            .iter()
            .find(|(u, _)| unit.starts_with(u))
            .map_or(1, |(_, s)| *s);
        out.push(n * scale);
    }
    out
}

/// The proto's comments state the bounds `GetLimits` lists, and no others: each "at most N" on
/// a field is the limit of that field in that message's scope, and every listed limit of a
/// field of such a message is stated on it. (`UploadChunk.total_size` once said 128 MiB and
/// 2^24 values while the platform took 1 GiB; integrators read the proto first, through
/// reflection and `grpcurl describe`.)
#[test]
fn the_proto_states_the_limits() {
    // The message whose fields a scope's limits name. Checked below against the registry and
    // the `SubmitJobRequest` oneof, so a new kind must be added here.
    let scopes: &[(&str, &str)] = &[
        ("ReckleBatchParams", "reckle.batch"),
        ("ReckleUpdateParams", "reckle.update"),
        ("PariBatchParams", "pari.batch"),
        ("RegisterCircuitRequest", "circuit.register"),
        ("PariCircomParams", "pari.circom"),
        ("HekatonParams", "hekaton.prove"),
        ("NoopParams", "noop"),
        ("TestudoParams", "testudo"),
        ("UploadChunk", "request"),
        ("ListJobsRequest", "request"),
        ("GetBundleRequest", "request"),
    ];
    let registry = Registry::builtin();
    for k in registry.job_kinds() {
        assert!(scopes.iter().any(|(_, s)| *s == k.name()), "job kind {} has no message in this test's list", k.name());
    }
    let (fields, _) = proto();
    for f in fields.iter().filter(|f| f.message == "SubmitJobRequest" && f.name != "idempotency_key") {
        let msg = fields.iter().find(|g| g.message.ends_with("Params") && g.message.to_lowercase().replace('_', "") == format!("{}params", f.name.replace('_', ""))).map(|g| g.message.clone());
        let msg = msg.unwrap_or_else(|| panic!("SubmitJobRequest.{}: no message of its parameters found", f.name));
        assert!(scopes.iter().any(|(m, _)| *m == msg), "{msg} has no scope in this test's list");
    }

    let limits = platform::grpc::limits_to_pb(&platform::PlatformConfig::default()).limits;
    let mut problems = Vec::new();
    for f in &fields {
        let Some((_, scope)) = scopes.iter().find(|(m, _)| *m == f.message) else {
            if !at_most(&f.comment).is_empty() {
                problems.push(format!("{}.{} states a bound (\"at most\") but its message has no scope in GetLimits", f.message, f.name));
            }
            continue;
        };
        let limit = limits.iter().find(|l| l.scope == *scope && l.field == f.name);
        let stated = at_most(&f.comment);
        match limit {
            Some(l) if !stated.contains(&l.max) => {
                problems.push(format!("{}.{}: GetLimits says {} {} ({scope}), the comment says {stated:?}", f.message, f.name, l.max, l.unit))
            }
            Some(l) if stated.iter().any(|n| *n != l.max) => {
                problems.push(format!("{}.{}: the comment states {stated:?}, GetLimits only {}", f.message, f.name, l.max))
            }
            None if !stated.is_empty() => {
                problems.push(format!("{}.{}: the comment states {stated:?}, GetLimits lists no bound of {scope} {}", f.message, f.name, f.name))
            }
            _ => {}
        }
    }
    assert!(problems.is_empty(), "proto/prover/v1/jobs.proto and GetLimits disagree:\n{}", problems.join("\n"));
}

/// `Job.kind`'s comment names every job kind of the registry, and nothing else.
#[test]
fn the_proto_lists_the_job_kinds() {
    let (fields, _) = proto();
    let kind = fields.iter().find(|f| f.message == "Job" && f.name == "kind").expect("Job.kind");
    let quoted: Vec<&str> = kind.comment.split('"').skip(1).step_by(2).collect();
    let registry = Registry::builtin();
    let mut want: Vec<&str> = registry.job_kinds().iter().map(|k| k.name()).collect();
    let mut got = quoted.clone();
    want.sort();
    got.sort();
    assert_eq!(got, want, "proto/prover/v1/jobs.proto Job.kind: the kinds listed differ from the registry's");
}

/// `docs/service-contract.md` names every RPC of `JobService`, from the proto.
#[test]
fn the_service_contract_lists_the_rpcs() {
    let (_, rpcs) = proto();
    assert!(rpcs.len() >= 14, "{rpcs:?}");
    let text = marked("docs/service-contract.md", "<!-- rpcs:begin (proto/prover/v1/jobs.proto) -->", "<!-- rpcs:end -->");
    let listed: Vec<String> = text.split('`').skip(1).step_by(2).map(str::to_string).collect();
    assert_eq!(listed, rpcs, "docs/service-contract.md: the JobService RPCs differ from the proto's (in its order)");
}

/// The README's table of proof systems names every job kind once, and no other (its last
/// column; checked so that a new kind cannot be missing from the first page a user reads).
#[test]
fn the_readme_table_lists_every_job_kind() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let header = "| proof system | what a job proves | job kinds |";
    let table: Vec<&str> = readme.lines().skip_while(|l| *l != header).skip(2).take_while(|l| l.starts_with('|')).collect();
    assert!(!table.is_empty(), "README.md: no table headed {header:?}");
    let mut listed: Vec<String> = Vec::new();
    for row in table {
        let last = row.trim_end_matches('|').rsplit('|').next().unwrap();
        listed.extend(last.split('`').skip(1).step_by(2).map(str::to_string));
    }
    listed.sort();
    let mut kinds: Vec<String> = Registry::builtin().kinds().map(|k| k.name().to_string()).collect();
    kinds.sort();
    assert_eq!(listed, kinds, "README.md's table of job kinds differs from the registry (`prover kinds`)");
}
