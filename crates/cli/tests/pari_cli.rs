//! `prover pari`: keys pinned by digest (issue 10 item 5) and batch reports that name every bad
//! proof (issue 16).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ark_bls12_381::Bls12_381 as E;
use ark_ec::{AffineRepr, CurveGroup};
use pari::{Proof, VerifyingKey};

fn prover(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_prover")).args(args).output().expect("run prover")
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok(o: Output) -> Output {
    assert!(o.status.success(), "failed: {}\n{}", err(&o), out(&o));
    assert!(!err(&o).contains("panicked"));
    o
}

fn failed(o: Output, needle: &str) -> Output {
    assert!(!o.status.success(), "expected failure; stdout: {}", out(&o));
    let all = format!("{}{}", out(&o), err(&o));
    assert!(all.contains(needle), "output does not mention {needle:?}: {all}");
    assert!(!all.contains("panicked"), "panicked: {all}");
    o
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// `prover pari setup`; returns the printed vk digest.
fn setup(circuit: &str, size: usize, seed: u64, dir: &Path) -> String {
    let o = ok(prover(&["pari", "setup", "--circuit", circuit, "--size", &size.to_string(), "--seed", &seed.to_string(), "--out", p(dir)]));
    let text = out(&o);
    let line = text.lines().find_map(|l| l.strip_prefix("vk digest: ")).unwrap_or_else(|| panic!("no digest in {text}"));
    assert_eq!(line.len(), 128);
    line.to_string()
}

fn prove(keys: &Path, seed: u64, dir: &Path) {
    ok(prover(&["pari", "prove", "--keys", p(keys), "--witness-seed", &seed.to_string(), "--out", p(dir)]));
}

fn read_proof(dir: &Path) -> (Vec<ark_bls12_381::Fr>, Proof<E>) {
    let proof = Proof::<E>::from_bytes(&std::fs::read(dir.join("proof.bin")).unwrap()).unwrap();
    let public: Vec<String> = serde_json::from_slice(&std::fs::read(dir.join("public.json")).unwrap()).unwrap();
    (public.iter().map(|s| s.parse().unwrap()).collect(), proof)
}

/// The attack: the honest circuit is a Poseidon preimage; the attacker runs setup for a chain of
/// the same size (same n and L), proves a chain instance, and hands over its own `vk.bin`
/// beside the proof (and beside a bundle). Unpinned verifiers accept; pinned ones refuse.
#[test]
fn a_key_for_another_circuit_of_the_same_size_is_refused_when_pinned() {
    let tmp = tempfile::tempdir().unwrap();
    let honest = tmp.path().join("honest");
    let honest_digest = setup("poseidon", 1, 1, &honest);
    let forged = tmp.path().join("forged");
    // A chain of 400 squarings: 403 rows, the same domain (512) as Poseidon of one input.
    let forged_digest = setup("chain", 400, 2, &forged);
    let vk_honest = VerifyingKey::<E>::from_bytes(&std::fs::read(honest.join("vk.bin")).unwrap()).unwrap();
    let vk_forged = VerifyingKey::<E>::from_bytes(&std::fs::read(forged.join("vk.bin")).unwrap()).unwrap();
    assert_eq!((vk_honest.domain_size, vk_honest.num_instance), (vk_forged.domain_size, vk_forged.num_instance));
    let claim = tmp.path().join("claim");
    prove(&honest, 5, &claim);
    // The attacker proves a chain instance and hands over its own key, claiming the honest circuit.
    let lie = tmp.path().join("lie");
    prove(&forged, 7, &lie);
    std::fs::copy(honest.join("circuit.json"), forged.join("circuit.json")).unwrap();

    // Unpinned: accepted, and the command says it trusted the key beside the proof.
    let o = ok(prover(&["pari", "verify", "--keys", p(&forged), p(&lie)]));
    assert!(out(&o).contains("verified") && out(&o).contains("NOT PINNED") && out(&o).contains(&forged_digest), "{}", out(&o));
    // Pinned: refused, naming both digests.
    let o = failed(prover(&["pari", "verify", "--keys", p(&forged), "--vk-digest", &honest_digest, p(&lie)]), "unexpected key");
    assert!(err(&o).contains(&honest_digest) && err(&o).contains(&forged_digest), "{}", err(&o));
    failed(prover(&["pari", "batch-verify", "--keys", p(&forged), "--vk-digest", &honest_digest, p(&lie)]), "unexpected key");
    // The honest proof under the pinned honest key.
    let o = ok(prover(&["pari", "verify", "--keys", p(&honest), "--vk-digest", &honest_digest, p(&claim)]));
    assert!(out(&o).contains(&format!("has the expected vk digest {honest_digest}")), "{}", out(&o));
    // A malformed digest is a usage error.
    failed(prover(&["pari", "verify", "--keys", p(&honest), "--vk-digest", "abc", p(&claim)]), "128 hex");

    // verify-bundles with the attacker's vk.bin beside the bundle.
    let (x, proof) = read_proof(&lie);
    let bundle = pari::bundle::Bundle::new(&vk_forged, vec![(x, proof)]);
    std::fs::write(forged.join("bundle-0.bin"), bundle.to_bytes()).unwrap();
    let o = ok(prover(&["pari", "verify-bundles", p(&forged)]));
    assert!(out(&o).contains("NOT PINNED") && out(&o).contains("1 verified, 0 bad"), "{}", out(&o));
    failed(prover(&["pari", "verify-bundles", p(&forged), "--vk-digest", &honest_digest]), "unexpected key");
}

/// Issue 16: twelve proofs, three damaged in different ways; the command names exactly those
/// three with their reasons, in lines and in JSON.
#[test]
fn batch_verify_names_every_bad_proof() {
    let tmp = tempfile::tempdir().unwrap();
    let keys = tmp.path().join("keys");
    let digest = setup("chain", 100, 3, &keys);
    let dirs: Vec<PathBuf> = (1..=12).map(|k| tmp.path().join(format!("p{k}"))).collect();
    for (k, d) in dirs.iter().enumerate() {
        prove(&keys, k as u64, d);
    }
    let all: Vec<&str> = dirs.iter().map(|d| p(d)).collect();
    let mut args = vec!["pari", "batch-verify", "--keys", p(&keys), "--vk-digest", &digest];
    args.extend(&all);
    let o = ok(prover(&args));
    assert!(out(&o).contains("12 verified, 0 bad"), "{}", out(&o));

    // p3: one byte of T changed so that the point does not parse.
    let bytes = std::fs::read(dirs[2].join("proof.bin")).unwrap();
    let damaged = (6..50)
        .flat_map(|pos| (0..8).map(move |bit| (pos, 1u8 << bit)))
        .map(|(pos, mask)| {
            let mut b = bytes.clone();
            b[pos] ^= mask;
            b
        })
        .find(|b| Proof::<E>::from_bytes(b).is_err())
        .unwrap();
    std::fs::write(dirs[2].join("proof.bin"), damaged).unwrap();
    // p8: U replaced by U + G, a valid point: a wrong proof.
    let (_, p8) = read_proof(&dirs[7]);
    let wrong = Proof::<E> { u: (p8.u + ark_bls12_381::G1Affine::generator()).into_affine(), ..p8 };
    std::fs::write(dirs[7].join("proof.bin"), wrong.to_bytes()).unwrap();
    // p11: a valid proof, but for another public input (p12's).
    std::fs::copy(dirs[11].join("public.json"), dirs[10].join("public.json")).unwrap();

    let o = failed(prover(&args), "3 of 12 bad");
    let text = out(&o);
    let bad: Vec<&str> = text.lines().filter(|l| l.starts_with("bad: ")).collect();
    assert_eq!(bad.len(), 3, "{text}");
    assert!(bad[0].starts_with(&format!("bad: {}: unparsable proof: proof.bin:", p(&dirs[2]))), "{text}");
    assert!(bad[1].starts_with(&format!("bad: {}: fails the check", p(&dirs[7]))), "{text}");
    assert!(bad[2].starts_with(&format!("bad: {}: fails the check", p(&dirs[10]))), "{text}");
    assert!(text.contains("9 verified, 3 bad"), "{text}");

    let mut json_args = args.clone();
    json_args.push("--json");
    let o = failed(prover(&json_args), "3 of 12 bad");
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON report on stdout");
    assert_eq!(report["vk_digest"], digest.as_str());
    assert_eq!(report["vk_pinned"], true);
    assert_eq!((report["total"].as_u64(), report["verified"].as_u64()), (Some(12), Some(9)));
    let bad = report["bad"].as_array().unwrap();
    let named: Vec<(&str, &str)> = bad.iter().map(|b| (b["entry"].as_str().unwrap(), b["kind"].as_str().unwrap())).collect();
    assert_eq!(named, vec![(p(&dirs[2]), "unparsable-proof"), (p(&dirs[7]), "fails-check"), (p(&dirs[10]), "fails-check")]);

    // A missing public.json and a wrong public-input count are named too.
    std::fs::remove_file(dirs[0].join("public.json")).unwrap();
    std::fs::write(dirs[1].join("public.json"), "[\"1\", \"2\"]").unwrap();
    let o = failed(prover(&args), "5 of 12 bad");
    let text = out(&o);
    assert!(text.contains(&format!("bad: {}: unparsable public input: cannot read public.json", p(&dirs[0]))), "{text}");
    assert!(text.contains(&format!("bad: {}: wrong public-input count: the key expects 1, got 2", p(&dirs[1]))), "{text}");

    // verify-bundles: a bundle whose entries 2 and 5 are damaged (a point that does not parse,
    // a wrong proof) beside a good bundle; entries are named `bundle-….bin#index`.
    let vk = VerifyingKey::<E>::from_bytes(&std::fs::read(keys.join("vk.bin")).unwrap()).unwrap();
    let good: Vec<_> = dirs[3..7].iter().map(|d| read_proof(d)).collect();
    let job = tmp.path().join("job");
    std::fs::create_dir(&job).unwrap();
    for f in ["circuit.json", "vk.bin"] {
        std::fs::copy(keys.join(f), job.join(f)).unwrap();
    }
    std::fs::write(job.join("bundle-0.bin"), pari::bundle::Bundle::new(&vk, good.clone()).to_bytes()).unwrap();
    let mut items: Vec<_> = dirs[3..10].iter().filter(|d| *d != &dirs[7]).map(|d| read_proof(d)).collect();
    items[5].1 = wrong.clone();
    let mut b = pari::bundle::Bundle::new(&vk, items.clone()).to_bytes();
    let t2 = items[2].1.to_bytes()[5..53].to_vec();
    let at = b.windows(t2.len()).position(|w| w == t2).unwrap();
    let bad_t = (0..48 * 8).map(|i| {
        let mut t = t2.clone();
        t[i / 8] ^= 1 << (i % 8);
        t
    });
    let bad_t = bad_t.into_iter().find(|t| {
        let mut c = b.clone();
        c[at..at + 48].copy_from_slice(t);
        pari::bundle::Bundle::<E>::from_bytes(&c).is_err()
    });
    b[at..at + 48].copy_from_slice(&bad_t.unwrap());
    std::fs::write(job.join("bundle-1.bin"), b).unwrap();
    let o = failed(prover(&["pari", "verify-bundles", p(&job), "--vk-digest", &digest]), "2 of 10 bad");
    let text = out(&o);
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("bad: ")).collect();
    let b1 = job.join("bundle-1.bin");
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].starts_with(&format!("bad: {}#2: unparsable proof", p(&b1))), "{text}");
    assert!(lines[1].starts_with(&format!("bad: {}#5: fails the check", p(&b1))), "{text}");
    assert!(text.contains("8 verified, 2 bad"), "{text}");
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../circom/tests/fixtures").join(name)
}

/// Bring your own circuit (issue 14): circom's `.r1cs` and snarkjs's `.wtns` in, a Pari proof
/// out, verified against the pinned key with the public signals printed; a changed public
/// signal, a witness that does not satisfy the circuit and a file for the other curve refused.
#[test]
fn circom_circuits_are_set_up_proved_and_verified() {
    let tmp = tempfile::tempdir().unwrap();
    for (curve, other) in [("bn254", "bls12-381"), ("bls12381", "bn254")] {
        let r1cs = fixture(&format!("example-{curve}.r1cs"));
        let wtns = fixture(&format!("example-{curve}.wtns"));
        let keys = tmp.path().join(format!("keys-{curve}"));
        failed(prover(&["pari", "setup", "--r1cs", p(&r1cs), "--curve", other, "--out", p(&keys)]), "--prime");
        let o = ok(prover(&["pari", "setup", "--r1cs", p(&r1cs), "--seed", "3", "--out", p(&keys)]));
        let digest = out(&o).lines().find_map(|l| l.strip_prefix("vk digest: ")).expect("digest").to_string();
        failed(prover(&["pari", "prove", "--keys", p(&keys), "--out", p(&tmp.path().join("none"))]), "--wtns");

        let proof = tmp.path().join(format!("proof-{curve}"));
        let o = ok(prover(&["pari", "prove", "--keys", p(&keys), "--wtns", p(&wtns), "--out", p(&proof)]));
        assert!(out(&o).contains("public signals: 33, "), "{}", out(&o));
        let o = ok(prover(&["pari", "verify", "--keys", p(&keys), "--vk-digest", &digest, p(&proof)]));
        let text = out(&o);
        assert!(text.contains("verified") && text.contains("public signals (outputs, then public inputs): 33, "), "{text}");
        assert!(text.trim_end().ends_with(", 11"), "the public input b = 11 comes last: {text}");

        // The snarkjs-style export: the key's digest, its public-input count, the proof's
        // points as [x, y, "1"], and the same public signals.
        let public: Vec<String> = serde_json::from_slice(&std::fs::read(proof.join("public.json")).unwrap()).unwrap();
        let json = tmp.path().join(format!("json-{curve}"));
        ok(prover(&["pari", "export-snarkjs", p(&keys), "--proof", p(&proof), "--out", p(&json)]));
        let read = |n: &str| serde_json::from_slice::<serde_json::Value>(&std::fs::read(json.join(n)).unwrap()).unwrap();
        let vk = read("verification_key.json");
        assert_eq!((vk["protocol"].as_str(), vk["curve"].as_str(), vk["nPublic"].as_u64()), (Some("pari"), Some(if curve == "bn254" { "bn128" } else { "bls12381" }), Some(3)));
        assert_eq!(vk["vkDigest"].as_str(), Some(digest.as_str()));
        assert_eq!(vk["vk_delta_h"][2], serde_json::json!(["1", "0"]));
        assert_eq!(read("proof-p0.json")["t"][2], "1");
        assert_eq!(read("public-p0.json"), serde_json::json!(public));

        // Claim another output.
        let mut lie = public.clone();
        lie[0] = "34".into();
        std::fs::write(proof.join("public.json"), serde_json::to_vec(&lie).unwrap()).unwrap();
        failed(prover(&["pari", "verify", "--keys", p(&keys), "--vk-digest", &digest, p(&proof)]), "");
    }

    // A witness with one wire changed: refused before proving, naming the constraint.
    let mut w = circom::read_wtns::<ark_bn254::Fr>(&std::fs::read(fixture("example-bn254.wtns")).unwrap()).unwrap();
    w[1] += ark_bn254::Fr::from(1u64);
    let bad = tmp.path().join("bad.wtns");
    std::fs::write(&bad, circom::write_wtns(&w)).unwrap();
    failed(
        prover(&["pari", "prove", "--keys", p(&tmp.path().join("keys-bn254")), "--wtns", p(&bad), "--out", p(&tmp.path().join("bad"))]),
        "does not satisfy constraint",
    );
    // A witness for the other curve.
    failed(
        prover(&[
            "pari", "prove", "--keys", p(&tmp.path().join("keys-bn254")), "--wtns", p(&fixture("example-bls12381.wtns")), "--out",
            p(&tmp.path().join("bad2")),
        ]),
        "bls12381",
    );
}
