//! End-to-end tests of `prover hekaton setup | prove | verify`: keys made by a separate setup,
//! a verifier that checks against a pinned key (file or digest) and refuses to run without
//! one, and the rejections: tampered proof, other public input, a proof made under another
//! setup, keys for another circuit.

use std::path::Path;
use std::process::{Command, Output};

fn prover(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_prover")).args(args).output().expect("run prover")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn assert_ok(o: &Output) {
    assert!(o.status.success(), "failed: {}", stderr(o));
}

fn assert_fails_with(o: &Output, needle: &str) {
    assert!(!o.status.success(), "expected failure, got success; stdout: {}", stdout(o));
    let err = stderr(o);
    assert!(err.contains(needle), "stderr does not mention {needle:?}: {err}");
    assert!(!err.contains("panicked"), "panicked: {err}");
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The digest a `setup` or `prove` printed.
fn digest_of(o: &Output) -> String {
    let out = stdout(o);
    let line = out.lines().find_map(|l| l.strip_prefix("verifying key digest: ")).unwrap_or_else(|| panic!("no digest in {out}"));
    assert_eq!(line.len(), 64, "{line}");
    line.to_string()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

const CIRCUIT: [&str; 8] = ["--circuit", "synthetic", "--subcircuits", "2", "--steps", "16", "--wires", "2"];

fn setup(out: &Path) -> String {
    let o = prover(&[&["hekaton", "setup"][..], &CIRCUIT, &["--out", p(out)]].concat());
    assert_ok(&o);
    for f in ["pk.bin", "vk.bin", "circuit.json"] {
        assert!(out.join(f).exists(), "setup wrote no {f}");
    }
    digest_of(&o)
}

fn prove(keys: &Path, out: &Path) -> Output {
    prover(&[&["hekaton", "prove"][..], &CIRCUIT, &["--seed", "3", "--keys", p(keys), "--out", p(out)]].concat())
}

#[test]
fn hekaton_setup_prove_verify_against_a_pinned_key() {
    let tmp = tempfile::tempdir().unwrap();
    let keys = tmp.path().join("keys");
    let digest = setup(&keys);
    let out = tmp.path().join("hk");
    let o = prove(&keys, &out);
    assert_ok(&o);
    assert_eq!(digest_of(&o), digest);

    // Pinned by digest, and by file.
    let v = prover(&["hekaton", "verify", p(&out), "--vk-digest", &digest]);
    assert_ok(&v);
    assert!(stdout(&v).contains("verified") && stdout(&v).contains(&digest), "{}", stdout(&v));
    let keys_vk = keys.join("vk.bin");
    assert_ok(&prover(&["hekaton", "verify", p(&out), "--vk", p(&keys_vk)]));
    assert_ok(&prover(&["hekaton", "verify", p(&out), "--vk", p(&keys_vk), "--vk-digest", &digest]));

    // No pinned key: refused, unless the user says to trust the proof directory.
    assert_fails_with(&prover(&["hekaton", "verify", p(&out)]), "--vk-digest");
    let v = prover(&["hekaton", "verify", p(&out), "--trust-proof-dir"]);
    assert_ok(&v);
    assert!(stderr(&v).contains("came with the proof"), "{}", stderr(&v));
    assert_fails_with(&prover(&["hekaton", "verify", p(&out), "--vk-digest", "abc"]), "64 hex digits");

    // A flipped proof byte.
    let bad = tmp.path().join("bad-proof");
    copy_dir(&out, &bad);
    let mut proof = std::fs::read(bad.join("proof.bin")).unwrap();
    let mid = proof.len() / 2;
    proof[mid] ^= 0x40;
    std::fs::write(bad.join("proof.bin"), proof).unwrap();
    let o = prover(&["hekaton", "verify", p(&bad), "--vk-digest", &digest]);
    assert!(!o.status.success() && !stderr(&o).contains("panicked"), "{}", stderr(&o));

    // Another public input.
    let bad = tmp.path().join("bad-public");
    copy_dir(&out, &bad);
    std::fs::write(bad.join("public.json"), "[\"12345\"]").unwrap();
    assert_fails_with(&prover(&["hekaton", "verify", p(&bad), "--vk-digest", &digest]), "does not verify");

    // A proof made under another setup of the same circuit (another trapdoor): its directory's
    // key has another digest, and under the pinned key the proof does not verify.
    let keys2 = tmp.path().join("keys2");
    let digest2 = setup(&keys2);
    assert_ne!(digest, digest2);
    let out2 = tmp.path().join("hk2");
    assert_ok(&prove(&keys2, &out2));
    assert_fails_with(&prover(&["hekaton", "verify", p(&out2), "--vk-digest", &digest]), "not the expected");
    assert_fails_with(&prover(&["hekaton", "verify", p(&out2), "--vk", p(&keys_vk)]), "does not verify");
    // ...and swapping the other key into the directory does not help.
    let swapped = tmp.path().join("swapped");
    copy_dir(&out2, &swapped);
    std::fs::copy(&keys_vk, swapped.join("vk.bin")).unwrap();
    assert_fails_with(&prover(&["hekaton", "verify", p(&swapped), "--vk-digest", &digest]), "does not verify");

    // Keys for another circuit are refused by the prover; nothing is written.
    let other = tmp.path().join("other");
    let o = prover(&[
        "hekaton", "prove", "--circuit", "synthetic", "--subcircuits", "2", "--steps", "17", "--wires", "2", "--keys", p(&keys),
        "--out", p(&other),
    ]);
    assert_fails_with(&o, "another circuit");
    assert!(!other.exists());
    // A damaged key file is a clear error.
    let broken = tmp.path().join("broken");
    copy_dir(&keys, &broken);
    let pk = std::fs::read(broken.join("pk.bin")).unwrap();
    std::fs::write(broken.join("pk.bin"), &pk[..pk.len() / 2]).unwrap();
    assert_fails_with(&prove(&broken, &other), "pk.bin");
    assert!(!other.exists());
}

#[test]
fn hekaton_one_shot_prove_and_bad_parameters() {
    let tmp = tempfile::tempdir().unwrap();
    // The one-shot demo path: the prover makes its own key, and says what that means.
    let out = tmp.path().join("hk");
    let o = prover(&[&["hekaton", "prove"][..], &CIRCUIT, &["--out", p(&out)]].concat());
    assert_ok(&o);
    assert!(stderr(&o).contains("one-shot setup"), "{}", stderr(&o));
    let digest = digest_of(&o);
    assert_ok(&prover(&["hekaton", "verify", p(&out), "--vk-digest", &digest]));
    // Bad parameters: one line, nothing written.
    let bad = tmp.path().join("bad");
    assert_fails_with(
        &prover(&["hekaton", "prove", "--circuit", "merkle-update", "--depth", "5", "--parts", "2", "--out", p(&bad)]),
        "--parts must divide depth",
    );
    assert_fails_with(
        &prover(&["hekaton", "setup", "--circuit", "merkle-update", "--depth", "5", "--parts", "2", "--out", p(&bad)]),
        "--parts must divide depth",
    );
    assert!(!bad.exists());
}

/// The size of the aggregated proof in `dir` (its `proof.bin`), after checking that
/// `prover hekaton verify` accepts it against the pinned keys and refuses it tampered.
fn aggregate_at(tmp: &Path, k: usize) -> usize {
    let circuit = ["--circuit", "synthetic", "--subcircuits", &k.to_string(), "--steps", "8", "--wires", "2"].map(String::from);
    let circuit: Vec<&str> = circuit.iter().map(String::as_str).collect();
    let keys = tmp.join(format!("keys-{k}"));
    let o = prover(&[&["hekaton", "setup"][..], &circuit, &["--out", p(&keys)]].concat());
    assert_ok(&o);
    let digest = digest_of(&o);
    let agg = stdout(&o).lines().find_map(|l| l.strip_prefix("aggregate verifying key digest: ")).expect("aggregate digest").to_string();
    let dir = tmp.join(format!("agg-{k}"));
    let o = prover(&[&["hekaton", "prove", "--aggregate"][..], &circuit, &["--seed", "5", "--keys", p(&keys), "--out", p(&dir)]].concat());
    assert_ok(&o);
    assert!(stdout(&o).contains(&format!("aggregate verifying key digest: {agg}")), "{}", stdout(&o));
    let v = prover(&["hekaton", "verify", p(&dir), "--vk-digest", &digest, "--agg-vk-digest", &agg]);
    assert_ok(&v);
    assert!(stdout(&v).contains(&format!("aggregated proof of {k} subcircuits")), "{}", stdout(&v));
    // Without the aggregate key pinned: refused, naming the flag.
    assert_fails_with(&prover(&["hekaton", "verify", p(&dir), "--vk-digest", &digest]), "--agg-vk-digest");
    // A flipped byte of the aggregate, and another public input: rejected.
    let bad = tmp.join(format!("agg-{k}-bad"));
    copy_dir(&dir, &bad);
    let mut proof = std::fs::read(bad.join("proof.bin")).unwrap();
    let mid = proof.len() / 2;
    proof[mid] ^= 0x08;
    std::fs::write(bad.join("proof.bin"), &proof).unwrap();
    let o = prover(&["hekaton", "verify", p(&bad), "--vk-digest", &digest, "--agg-vk-digest", &agg]);
    assert!(!o.status.success() && !stderr(&o).contains("panicked"), "{}", stderr(&o));
    copy_dir(&dir, &bad);
    std::fs::write(bad.join("public.json"), "[\"12345\"]").unwrap();
    assert_fails_with(&prover(&["hekaton", "verify", p(&bad), "--vk-digest", &digest, "--agg-vk-digest", &agg]), "does not verify");
    // The wrap takes the k proofs, and says so.
    assert_fails_with(
        &prover(&["hekaton", "wrap", p(&dir), "--vk-digest", &digest, "--wrap-keys", p(&tmp.join("wk"))]),
        "holds an aggregated proof",
    );
    std::fs::metadata(dir.join("proof.bin")).unwrap().len() as usize
}

/// `prover hekaton prove --aggregate` makes the proof the platform publishes, and `verify`
/// checks it: its size grows with log k (k = 8 → 64 adds three GIPA rounds), where the
/// k-proof form grows with k.
#[test]
fn hekaton_aggregate_grows_with_log_k() {
    let tmp = tempfile::tempdir().unwrap();
    let (s8, s64) = (aggregate_at(tmp.path(), 8), aggregate_at(tmp.path(), 64));
    eprintln!("aggregated proof: {s8} bytes at k = 8, {s64} at k = 64");
    assert!(s64 > s8, "the aggregate did not grow with k: {s8} → {s64}");
    // Linear growth would be 8×; three more rounds of a logarithmic proof are well under 2×.
    assert!(s64 < s8 * 3 / 2, "the aggregate grew like k, not log k: {s8} → {s64} bytes");
}

/// `prover hekaton wrap` and `verify-final` (issue 15): two proofs of a one-subcircuit circuit
/// wrapped with one set of wrap keys (made by the first wrap, reused by the second), verified
/// in one batch against the pinned final key; a final proof with another public input is
/// named; another key digest is refused.
#[test]
fn hekaton_wrap_and_verify_final() {
    let tmp = tempfile::tempdir().unwrap();
    let one = ["--circuit", "synthetic", "--subcircuits", "1", "--steps", "4", "--wires", "2"];
    let keys = tmp.path().join("keys");
    let o = prover(&[&["hekaton", "setup"][..], &one, &["--out", p(&keys)]].concat());
    assert_ok(&o);
    let digest = digest_of(&o);
    let wrap_keys = tmp.path().join("wrap-keys");
    let mut finals = Vec::new();
    for seed in ["3", "4"] {
        let dir = tmp.path().join(format!("proof-{seed}"));
        assert_ok(&prover(&[&["hekaton", "prove"][..], &one, &["--seed", seed, "--keys", p(&keys), "--out", p(&dir)]].concat()));
        let w = prover(&["hekaton", "wrap", p(&dir), "--vk-digest", &digest, "--wrap-keys", p(&wrap_keys)]);
        assert_ok(&w);
        assert_eq!(stderr(&w).contains("made the wrap keys"), seed == "3", "{}", stderr(&w));
        let out = stdout(&w);
        finals.push(out.lines().find_map(|l| l.strip_prefix("final key digest: ")).expect("final key digest").to_string());
        assert!(dir.join("final.bin").exists() && dir.join("final-key.bin").exists());
    }
    assert_eq!(finals[0], finals[1], "the second wrap made other keys");
    let (d3, d4) = (tmp.path().join("proof-3"), tmp.path().join("proof-4"));
    let v = prover(&["hekaton", "verify-final", p(&d3), p(&d4), "--key-digest", &finals[0]]);
    assert_ok(&v);
    assert!(stdout(&v).contains("2 final proofs checked"), "{}", stdout(&v));
    assert_fails_with(&prover(&["hekaton", "verify-final", p(&d3), "--key-digest", &digest]), "not the pinned final key");
    // Another public input beside proof-4's final proof: named, the other still fine alone.
    let lie = tmp.path().join("lie");
    copy_dir(&d4, &lie);
    let public: Vec<String> = serde_json::from_slice(&std::fs::read(lie.join("public.json")).unwrap()).unwrap();
    let mut changed = public.clone();
    changed[0] = if public[0] == "1" { "2".into() } else { "1".into() };
    std::fs::write(lie.join("public.json"), serde_json::to_vec(&changed).unwrap()).unwrap();
    assert_fails_with(&prover(&["hekaton", "verify-final", p(&d3), p(&lie), "--key-digest", &finals[0]]), "lie");
    assert_fails_with(&prover(&["hekaton", "verify-final", p(&lie), "--key-digest", &finals[0]]), "does not verify");
    assert_ok(&prover(&["hekaton", "verify-final", p(&d3), "--key-digest", &finals[0]]));
}

/// A port for the embedded server, below Linux's ephemeral range (see `platform_e2e.rs`) and
/// apart from the ports that test picks.
fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    loop {
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let port = 12_000 + ((std::process::id().wrapping_mul(89).wrapping_add(n)) % 8_000) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// Waits until the server answers `/readyz` on its metrics port, or fails if it exits first.
fn wait_ready(server: &mut std::process::Child, port: u16) {
    use std::io::{Read, Write};
    loop {
        if let Some(status) = server.try_wait().unwrap() {
            panic!("the server exited before it was ready: {status}");
        }
        let answer = std::net::TcpStream::connect(("127.0.0.1", port)).ok().and_then(|mut s| {
            write!(s, "GET /readyz HTTP/1.0\r\nHost: localhost\r\n\r\n").ok()?;
            let mut out = String::new();
            s.read_to_string(&mut out).ok()?;
            Some(out)
        });
        if answer.is_some_and(|r| r.starts_with("HTTP/1.0 200") || r.starts_with("HTTP/1.1 200")) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The server process, killed when dropped.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The value after `label = ` in `prover fetch`'s output.
fn printed(out: &str, label: &str) -> String {
    out.lines().find_map(|l| l.strip_prefix(&format!("{label} = "))).unwrap_or_else(|| panic!("fetch printed no {label}: {out}")).to_string()
}

/// Issue 30 on the platform: a Hekaton job on the embedded server (`prover serve --embedded`,
/// no Redis or S3) publishes one aggregated proof. `prover fetch` prints the command that pins
/// both keys, and it accepts the directory. The verifier refuses the directory without an
/// aggregate key, with another pinned aggregate digest, and every tamper: a flipped byte of a
/// group element, another job's aggregate, another circuit's aggregate key (swapped into the
/// directory, or pinned).
#[test]
fn platform_hekaton_job_publishes_an_aggregate_that_verify_checks() {
    let tmp = tempfile::tempdir().unwrap();
    let (grpc, metrics) = (free_port(), free_port());
    let ep = format!("http://127.0.0.1:{grpc}");
    let child = Command::new(env!("CARGO_BIN_EXE_prover"))
        .args(["serve", "--embedded", "--data", p(&tmp.path().join("data")), "--listen", &format!("127.0.0.1:{grpc}")])
        .args(["--metrics-listen", &format!("127.0.0.1:{metrics}"), "--concurrency", "2"])
        .env_remove("PROVER_REDIS_URL")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut server = Server(child);
    wait_ready(&mut server.0, metrics);
    let submit = |k: &str, seed: &str| {
        let o = prover(&["submit", "hekaton", "--circuit", "synthetic", "--subcircuits", k, "--steps", "4", "--wires", "1", "--seed", seed, "--endpoint", &ep]);
        assert_ok(&o);
        stdout(&o).trim().to_string()
    };
    // Job b proves the same circuit with other inputs; job c another circuit (2 subcircuits).
    let (a, b, c) = (submit("4", "3"), submit("4", "4"), submit("2", "3"));
    let mut fetched = Vec::new();
    for (job, name) in [(&a, "a"), (&b, "b"), (&c, "c")] {
        assert_ok(&prover(&["watch", job, "--endpoint", &ep]));
        let dir = tmp.path().join(name);
        let o = prover(&["fetch", job, "--out", p(&dir), "--endpoint", &ep]);
        assert_ok(&o);
        fetched.push((dir, stdout(&o)));
    }
    let (da, out_a) = &fetched[0];
    let (vk_digest, agg_digest) = (printed(out_a, "vk digest"), printed(out_a, "aggregate key digest"));
    // The command fetch prints verifies the directory.
    let command = out_a.lines().find_map(|l| l.strip_prefix("verify with: prover ")).unwrap_or_else(|| panic!("{out_a}"));
    assert_eq!(command, format!("hekaton verify {} --vk-digest {vk_digest} --agg-vk-digest {agg_digest}", p(da)));
    let v = prover(&command.split(' ').collect::<Vec<_>>());
    assert_ok(&v);
    assert!(stdout(&v).contains("aggregated proof of 4 subcircuits") && stdout(&v).contains(&agg_digest), "{}", stdout(&v));
    let verify = |dir: &Path, agg: &str| prover(&["hekaton", "verify", p(dir), "--vk-digest", &vk_digest, "--agg-vk-digest", agg]);

    // No aggregate key pinned: refused, naming the flag; --trust-proof-dir says what it trusted.
    assert_fails_with(&prover(&["hekaton", "verify", p(da), "--vk-digest", &vk_digest]), "--agg-vk-digest");
    let v = prover(&["hekaton", "verify", p(da), "--trust-proof-dir"]);
    assert_ok(&v);
    assert!(stderr(&v).contains("no pinned aggregate key"), "{}", stderr(&v));
    // Another aggregate digest pinned.
    let mut wrong = agg_digest.clone().into_bytes();
    wrong[0] = if wrong[0] == b'0' { b'1' } else { b'0' };
    assert_fails_with(&verify(da, std::str::from_utf8(&wrong).unwrap()), "not the pinned aggregate verifying key");

    // A flipped byte inside the aggregate's last G1 point (a KZG opening), which ends after the
    // version (4 bytes), cm_D and the aggregate.
    let bytes = std::fs::read(da.join("proof.bin")).unwrap();
    let proof: hekaton::aggregated::AggregatedProof<ark_bls12_381::Bls12_381> = hekaton::mirage::from_bytes(&bytes).unwrap();
    let end = 4 + hekaton::mirage::to_bytes(&proof.cm_d).unwrap().len() + proof.aggregate.size();
    let flipped = tmp.path().join("flipped");
    copy_dir(da, &flipped);
    let mut bad = bytes.clone();
    bad[end - 20] ^= 1;
    std::fs::write(flipped.join("proof.bin"), bad).unwrap();
    let o = verify(&flipped, &agg_digest);
    assert!(!o.status.success() && !stderr(&o).contains("panicked"), "a flipped group element verified: {}", stderr(&o));
    // Job b's aggregate (same keys, other inputs) in a's directory.
    let swapped = tmp.path().join("swapped");
    copy_dir(da, &swapped);
    std::fs::copy(fetched[1].0.join("proof.bin"), swapped.join("proof.bin")).unwrap();
    assert_fails_with(&verify(&swapped, &agg_digest), "does not verify");
    // Job c's aggregate key (another circuit) in a's directory: not the pinned one; pinned, it
    // is refused because it names another Hekaton key.
    let other = tmp.path().join("other-key");
    copy_dir(da, &other);
    std::fs::copy(fetched[2].0.join("agg-vk.bin"), other.join("agg-vk.bin")).unwrap();
    assert_fails_with(&verify(&other, &agg_digest), "not the pinned aggregate verifying key");
    let other_digest = printed(&fetched[2].1, "aggregate key digest");
    assert_ne!(other_digest, agg_digest);
    assert_fails_with(&verify(&other, &other_digest), "another Hekaton key");
    assert_ok(&verify(da, &agg_digest));
}
