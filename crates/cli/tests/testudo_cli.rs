//! End-to-end tests of `prover testudo setup | prove | verify` on circom's BLS12-381 fixture
//! (518 constraints, 3 public signals): a universal key made by a separate setup, a verifier
//! that checks against the pinned digest, brings its own .r1cs and refuses to run without a
//! pin, and the rejections: a tampered proof, another public value, a key from another setup,
//! another circuit, a key too small, a witness that does not satisfy. The compression (minutes
//! of Pari on BW6-767) runs in an ignored test only.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ark_bls12_381::Fr;

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

fn assert_fails_with(o: &Output, needles: &[&str]) {
    assert!(!o.status.success(), "expected failure, got success; stdout: {}", stdout(o));
    let err = stderr(o);
    for needle in needles {
        assert!(err.contains(needle), "stderr does not mention {needle:?}: {err}");
    }
    assert!(!err.contains("panicked"), "panicked: {err}");
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../circom/tests/fixtures").join(name)
}

const R1CS: &str = "example-bls12381.r1cs";
const W0: &str = "example-bls12381.wtns";
const W1: &str = "example-bls12381-w1.wtns";
const W2: &str = "example-bls12381-w2.wtns";

/// The 64-hex digest after `prefix` in a command's output.
fn printed(o: &Output, prefix: &str) -> String {
    let out = stdout(o);
    let d = out.lines().find_map(|l| l.strip_prefix(prefix)).unwrap_or_else(|| panic!("no {prefix:?} in {out}"));
    assert_eq!(d.len(), 64, "{d}");
    d.to_string()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

fn setup(out: &Path, max_vars: &str) -> String {
    let o = prover(&["testudo", "setup", "--max-vars", max_vars, "--out", p(out)]);
    assert_ok(&o);
    for f in ["tc-ck.bin", "tc-vk.bin", "keys.json"] {
        assert!(out.join(f).exists(), "setup wrote no {f}");
    }
    let d = printed(&o, "tc vk digest: ");
    let keys: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("keys.json")).unwrap()).unwrap();
    assert_eq!(keys["tc_vk_digest"], d.as_str());
    assert_eq!(keys["max_vars"].to_string(), max_vars);
    d
}

fn prove(r1cs: &Path, wtns: &[PathBuf], keys: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["testudo", "prove", "--r1cs", p(r1cs), "--keys", p(keys), "--out", p(out)];
    for w in wtns {
        args.extend(["--wtns", p(w)]);
    }
    args.extend(extra);
    prover(&args)
}

fn verify(dir: &Path, r1cs: &Path, pins: &[&str]) -> Output {
    prover(&[&["testudo", "verify", p(dir), "--r1cs", p(r1cs)][..], pins].concat())
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn testudo_setup_prove_verify_and_every_rejection() {
    let tmp = tempfile::tempdir().unwrap();
    let r1cs = fixture(R1CS);
    let keys = tmp.path().join("keys");
    let digest = setup(&keys, "12");

    // (a) Two witnesses proved under the key, verified with the printed digest.
    let out = tmp.path().join("proof");
    let o = prove(&r1cs, &[fixture(W0), fixture(W1)], &keys, &out, &[]);
    assert_ok(&o);
    assert_eq!(printed(&o, "tc vk digest: "), digest);
    let circuit_id = {
        let bytes = std::fs::read(&r1cs).unwrap();
        circom::digest(&bytes)
    };
    let meta = json(&out.join("circuit.json"));
    assert_eq!(
        meta,
        serde_json::json!({
            "proof_system": "testudo", "curve": "bls12-381", "circuit_id": circuit_id,
            "tc_vk_digest": digest, "witnesses": 2,
        })
    );
    let mut names: Vec<String> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["circuit.json", "inner-0.bin", "inner-1.bin", "public.json", "tc-vk.bin"]);
    // S4-8: a directory re-served with witness 1 dropped (circuit.json, public.json and its
    // proof trimmed together) verifies on its own word, and is refused once the count is pinned.
    let trimmed = tmp.path().join("trimmed");
    copy_dir(&out, &trimmed);
    std::fs::remove_file(trimmed.join("inner-1.bin")).unwrap();
    let mut m = json(&trimmed.join("circuit.json"));
    m["witnesses"] = 1.into();
    std::fs::write(trimmed.join("circuit.json"), serde_json::to_vec(&m).unwrap()).unwrap();
    let mut pubs = json(&trimmed.join("public.json"));
    pubs.as_array_mut().unwrap().truncate(1);
    std::fs::write(trimmed.join("public.json"), serde_json::to_vec(&pubs).unwrap()).unwrap();
    let o = verify(&trimmed, &r1cs, &["--tc-vk-digest", &digest]);
    assert_ok(&o);
    assert!(stderr(&o).contains("--witnesses N"), "unpinned, the count's source is named: {}", stderr(&o));
    assert_fails_with(&verify(&trimmed, &r1cs, &["--tc-vk-digest", &digest, "--witnesses", "2"]), &["--witnesses says 2"]);
    assert_ok(&verify(&out, &r1cs, &["--tc-vk-digest", &digest, "--witnesses", "2"]));
    assert_eq!(std::fs::read(out.join("tc-vk.bin")).unwrap(), std::fs::read(keys.join("tc-vk.bin")).unwrap());
    // public.json: circom's public signals of each witness (c = a·b, h, b).
    let public = json(&out.join("public.json"));
    let circuit = circom::R1cs::<Fr>::from_bytes(&std::fs::read(&r1cs).unwrap()).unwrap();
    for (i, w) in [W0, W1].iter().enumerate() {
        let w = circom::read_wtns::<Fr>(&std::fs::read(fixture(w)).unwrap()).unwrap();
        let expected: Vec<String> = circuit.public_signals(&w).iter().map(|v| v.to_string()).collect();
        assert_eq!(public[i], serde_json::json!({"witness": i, "public": expected}));
    }
    assert_eq!(public[0]["public"][0], "33", "c = 3·11");
    assert_eq!(public[1]["public"][0], "35", "c = 5·7");

    let v = verify(&out, &r1cs, &["--tc-vk-digest", &digest]);
    assert_ok(&v);
    assert!(stdout(&v).contains("verified 2 proof(s)") && stdout(&v).contains(&digest), "{}", stdout(&v));

    // No pin: refused, unless the user says to trust the proof directory.
    assert_fails_with(&verify(&out, &r1cs, &[]), &["--tc-vk-digest"]);
    let v = verify(&out, &r1cs, &["--trust-proof-dir"]);
    assert_ok(&v);
    assert!(stderr(&v).contains("came with the proofs"), "{}", stderr(&v));
    assert_fails_with(&verify(&out, &r1cs, &["--tc-vk-digest", "abc"]), &["--tc-vk-digest", "64 hex digits"]);
    assert_fails_with(&verify(&out, &r1cs, &["--final-key-digest", &digest]), &["final-key.bin"]);

    // (b) A flipped byte in inner-1.bin: named.
    let bad = tmp.path().join("bad-proof");
    copy_dir(&out, &bad);
    let mut proof = std::fs::read(bad.join("inner-1.bin")).unwrap();
    let mid = proof.len() / 2;
    proof[mid] ^= 0x40;
    std::fs::write(bad.join("inner-1.bin"), proof).unwrap();
    let o = verify(&bad, &r1cs, &["--tc-vk-digest", &digest]);
    assert_fails_with(&o, &["1 of the proofs", "inner-1.bin (witness 1)"]);
    assert!(!stderr(&o).contains("inner-0.bin"), "{}", stderr(&o));

    // Another public value of witness 1 (c = 36 in place of 35).
    let bad = tmp.path().join("bad-public");
    copy_dir(&out, &bad);
    let mut public = json(&bad.join("public.json"));
    public[1]["public"][0] = "36".into();
    std::fs::write(bad.join("public.json"), serde_json::to_vec(&public).unwrap()).unwrap();
    let o = verify(&bad, &r1cs, &["--tc-vk-digest", &digest]);
    assert_fails_with(&o, &["inner-1.bin (witness 1)"]);
    assert!(!stderr(&o).contains("inner-0.bin"), "{}", stderr(&o));
    // ... and a value that is not a canonical field element.
    public[1]["public"][0] = "036".into();
    std::fs::write(bad.join("public.json"), serde_json::to_vec(&public).unwrap()).unwrap();
    assert_fails_with(&verify(&bad, &r1cs, &["--tc-vk-digest", &digest]), &["public.json", "leading zero"]);

    // A key made by a second setup: pinning it refuses this directory's key; proofs made under
    // it are refused under the first pin, and its key swapped into this directory does not
    // verify these proofs.
    let keys2 = tmp.path().join("keys2");
    let digest2 = setup(&keys2, "12");
    assert_ne!(digest, digest2);
    assert_fails_with(&verify(&out, &r1cs, &["--tc-vk-digest", &digest2]), &["tc-vk.bin", "not the pinned"]);
    let out2 = tmp.path().join("proof2");
    assert_ok(&prove(&r1cs, &[fixture(W2)], &keys2, &out2, &[]));
    assert_ok(&verify(&out2, &r1cs, &["--tc-vk-digest", &digest2]));
    assert_fails_with(&verify(&out2, &r1cs, &["--tc-vk-digest", &digest]), &["not the pinned"]);
    let swapped = tmp.path().join("swapped");
    copy_dir(&out, &swapped);
    std::fs::copy(keys2.join("tc-vk.bin"), swapped.join("tc-vk.bin")).unwrap();
    assert_fails_with(
        &verify(&swapped, &r1cs, &["--tc-vk-digest", &digest2]),
        &["2 of the proofs", "inner-0.bin", "inner-1.bin"],
    );

    // Another circuit: BN254's fixture (not even over this field), and the BLS12-381 file with
    // one coefficient changed.
    let bn = fixture("example-bn254.r1cs");
    assert_fails_with(&verify(&out, &bn, &["--tc-vk-digest", &digest]), &["--r1cs", "prime"]);
    assert_fails_with(&prove(&bn, &[fixture(W0)], &keys, &tmp.path().join("bn"), &[]), &["--r1cs", "bls12381"]);
    let mut other = circuit.clone();
    let k = other.constraints.iter().position(|c| !c.a.is_empty()).unwrap();
    other.constraints[k].a[0].1 += Fr::from(1u64);
    let other_path = tmp.path().join("other.r1cs");
    std::fs::write(&other_path, other.to_bytes()).unwrap();
    let other_id = circom::digest(&std::fs::read(&other_path).unwrap());
    assert_fails_with(&verify(&out, &other_path, &["--tc-vk-digest", &digest]), &[&other_id, &circuit_id]);
    // ... even with circuit.json claiming it: the proofs are then checked against its matrices.
    let claimed = tmp.path().join("claimed");
    copy_dir(&out, &claimed);
    let mut meta = json(&claimed.join("circuit.json"));
    meta["circuit_id"] = other_id.clone().into();
    std::fs::write(claimed.join("circuit.json"), serde_json::to_vec(&meta).unwrap()).unwrap();
    assert_fails_with(&verify(&claimed, &other_path, &["--tc-vk-digest", &digest]), &["inner-0.bin", "inner-1.bin"]);

    // (c) A key too small for the circuit: refused, naming the --max-vars it needs.
    let small = tmp.path().join("small");
    setup(&small, "4");
    let o = prove(&r1cs, &[fixture(W0)], &small, &tmp.path().join("p-small"), &[]);
    assert_fails_with(&o, &["--max-vars"]);
    assert!(!tmp.path().join("p-small").exists());

    // A witness that does not satisfy (c changed): refused, naming the file and the constraint.
    let mut w = circom::read_wtns::<Fr>(&std::fs::read(fixture(W1)).unwrap()).unwrap();
    w[1] += Fr::from(1u64);
    let bad_w = tmp.path().join("bad.wtns");
    std::fs::write(&bad_w, circom::write_wtns(&w)).unwrap();
    let o = prove(&r1cs, &[fixture(W0), bad_w.clone()], &keys, &tmp.path().join("p-bad"), &[]);
    assert_fails_with(&o, &[p(&bad_w), "constraint"]);
    assert!(!tmp.path().join("p-bad").exists());

    // --compress without a compression key; --out over an existing directory.
    assert_fails_with(
        &prove(&r1cs, &[fixture(W0)], &keys, &tmp.path().join("p-c"), &["--compress"]),
        &["--compress", "--final-for"],
    );
    assert_fails_with(&prove(&r1cs, &[fixture(W0)], &keys, &out, &[]), &["--out", "already exists"]);
    // Setup into a key directory without --final-for; a bad --max-vars.
    assert_fails_with(&prover(&["testudo", "setup", "--out", p(&keys)]), &["--final-for"]);
    assert_fails_with(&prover(&["testudo", "setup", "--max-vars", "25", "--out", p(&tmp.path().join("k25"))]), &["--max-vars"]);
}

/// The compression: a Testudo-Comm key and a compression key for the circuit's shape, a proof
/// compressed into a Pari proof on BW6-767, verified against the pinned final key (one batch),
/// and a tampered final proof named.
#[test]
#[ignore = "a Pari setup and proof of a ~500k-constraint circuit on BW6-767: tens of minutes on 2 cores"]
fn testudo_compressed_proofs_verify_against_the_pinned_final_key() {
    let tmp = tempfile::tempdir().unwrap();
    let r1cs = fixture(R1CS);
    let keys = tmp.path().join("keys");
    let tc_digest = setup(&keys, "12");
    // The compression key added to the existing key directory.
    let o = prover(&["testudo", "setup", "--final-for", p(&r1cs), "--out", p(&keys)]);
    assert_ok(&o);
    assert_eq!(printed(&o, "tc vk digest: "), tc_digest);
    let final_digest = printed(&o, "final key digest: ");
    assert_eq!(json(&keys.join("keys.json"))["final_key_digest"], final_digest.as_str());
    assert_fails_with(
        &prover(&["testudo", "setup", "--final-for", p(&r1cs), "--out", p(&keys)]),
        &["holds a compression key already"],
    );

    let out = tmp.path().join("proof");
    let o = prove(&r1cs, &[fixture(W1)], &keys, &out, &["--compress"]);
    assert_ok(&o);
    assert_eq!(printed(&o, "final key digest: "), final_digest);
    assert_eq!(json(&out.join("circuit.json"))["final_key_digest"], final_digest.as_str());
    for f in ["final-key.bin", "final-0.bin", "inner-0.bin"] {
        assert!(out.join(f).exists(), "no {f}");
    }

    let v = verify(&out, &r1cs, &["--tc-vk-digest", &tc_digest, "--final-key-digest", &final_digest]);
    assert_ok(&v);
    assert!(stdout(&v).contains("verified 1 proof(s)") && stdout(&v).contains(&final_digest), "{}", stdout(&v));
    // The final key pins its Testudo-Comm key.
    assert_ok(&verify(&out, &r1cs, &["--final-key-digest", &final_digest]));
    assert_fails_with(&verify(&out, &r1cs, &["--final-key-digest", &tc_digest]), &["not the pinned final key"]);

    // A tampered final proof: a byte of its Pari proof flipped (a point that no longer decodes,
    // or another point), or its public values changed.
    let bad = tmp.path().join("bad");
    copy_dir(&out, &bad);
    let mut fin = std::fs::read(bad.join("final-0.bin")).unwrap();
    let last = fin.len() - 1;
    fin[last] ^= 1;
    std::fs::write(bad.join("final-0.bin"), fin).unwrap();
    let o = verify(&bad, &r1cs, &["--final-key-digest", &final_digest]);
    assert_fails_with(&o, &["final-0.bin (witness 0)"]);
    assert!(!stderr(&o).contains("inner-0.bin"), "{}", stderr(&o));
}
