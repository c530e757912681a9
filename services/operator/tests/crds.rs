//! The committed CRD YAML (deploy/crds/, helm/prover/crds/) must be what the Rust types
//! generate. Regenerate with:
//!   cargo run -p prover-operator --bin operator -- crds --out-dir deploy/crds
//!   cargo run -p prover-operator --bin operator -- crds --out-dir helm/prover/crds

use std::path::Path;

#[test]
fn committed_crds_match_the_types() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let files = prover_operator::crd::crd_files();
    assert_eq!(
        files.iter().map(|(f, _)| f.as_str()).collect::<Vec<_>>(),
        ["proofjobs.prover.dev.yaml", "proverpools.prover.dev.yaml"]
    );
    for dir in ["deploy/crds", "helm/prover/crds"] {
        for (file, yaml) in &files {
            let path = root.join(dir).join(file);
            let committed = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(
                committed == *yaml,
                "{dir}/{file} differs from the CRD the types generate; regenerate with \
                 `cargo run -p prover-operator --bin operator -- crds --out-dir {dir}`"
            );
        }
        let extra: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| !files.iter().any(|(f, _)| f == n))
            .collect();
        assert!(extra.is_empty(), "{dir} holds files no CRD generates: {extra:?}");
    }
}

#[test]
fn crds_have_the_expected_shape() {
    let docs: Vec<serde_json::Value> =
        prover_operator::crd::crd_files().iter().map(|(_, y)| serde_saphyr::from_str(y).expect("YAML parses")).collect();
    let pj = &docs[0];
    assert_eq!(pj["spec"]["group"], "prover.dev");
    assert_eq!(pj["spec"]["names"]["kind"], "ProofJob");
    assert_eq!(pj["spec"]["scope"], "Namespaced");
    let v = &pj["spec"]["versions"][0];
    assert_eq!(v["name"], "v1alpha1");
    assert!(v["subresources"]["status"].is_object());
    let spec = &v["schema"]["openAPIV3Schema"]["properties"]["spec"];
    // Every job kind (`JobKind::ALL` is checked against the proto's params in `proofjob`).
    let kinds: Vec<&str> = prover_operator::crd::JobKind::ALL.iter().map(|k| k.as_str()).collect();
    assert_eq!(spec["properties"]["kind"]["enum"], serde_json::json!(kinds));
    assert!(kinds.contains(&"testudo") && kinds.contains(&"noop"), "{kinds:?}");
    for p in ["reckleBatch", "reckleUpdate", "pariBatch", "pariCircom", "hekaton", "noop", "testudo", "idempotencyKey"] {
        assert!(spec["properties"][p].is_object(), "ProofJob spec.{p}");
    }
    let status = &v["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"];
    for p in ["phase", "jobId", "tasks", "proofPrefix", "message", "observedGeneration"] {
        assert!(status[p].is_object(), "ProofJob status.{p}");
    }
    assert_eq!(status["phase"]["enum"], serde_json::json!(["Pending", "Queued", "Running", "Done", "Failed", "Cancelled"]));

    let pp = &docs[1];
    assert_eq!(pp["spec"]["names"]["kind"], "ProverPool");
    let v = &pp["spec"]["versions"][0];
    let spec = &v["schema"]["openAPIV3Schema"]["properties"]["spec"];
    assert_eq!(spec["required"], serde_json::json!(["deployment", "maxReplicas", "taskKinds"]));
    let status = &v["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"];
    for p in ["desiredReplicas", "busyWorkers", "pending", "running", "secondsPerTask", "lastScaleTime", "message"] {
        assert!(status[p].is_object(), "ProverPool status.{p}");
    }
}
