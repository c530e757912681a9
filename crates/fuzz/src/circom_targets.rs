//! circom's files: `.r1cs` and `.wtns` as a user uploads them (issue 14). Seeds: a small circuit
//! written by the crate's own encoder, and its witness. An accepted `.r1cs` is also checked
//! against a witness of zeros and, when small, synthesised as an arkworks constraint system, so
//! a decoder that lets an inconsistent file through shows up as a panic there.

use ark_bls12_381::Fr;
use ark_ff::One;
use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystem};
use circom::{read_wtns, write_wtns, CircomCircuit, Constraint, R1cs};

use crate::engine::Target;

/// `out = a·b` with `b` public: wires 1, out, b, a.
fn seed_circuit() -> (R1cs<Fr>, Vec<Fr>) {
    let one = Fr::one();
    let r = R1cs {
        num_wires: 4,
        num_pub_out: 1,
        num_pub_in: 1,
        num_prv_in: 1,
        num_labels: 4,
        constraints: vec![Constraint { a: vec![(3, one)], b: vec![(2, one)], c: vec![(1, one)] }],
        wire_labels: Some(vec![0, 1, 2, 3]),
    };
    (r, vec![one, Fr::from(33u64), Fr::from(11u64), Fr::from(3u64)])
}

pub fn targets() -> Vec<Target> {
    let (r, w) = seed_circuit();
    vec![
        Target {
            name: "circom.r1cs",
            seeds: vec![r.to_bytes()],
            run: Box::new(|b| {
                let Ok(r) = R1cs::<Fr>::from_bytes(b) else { return false };
                let zeros = vec![Fr::from(0u64); r.num_wires as usize];
                let _ = r.check_witness(&zeros);
                if r.num_wires <= 4096 {
                    let cs = ConstraintSystem::<Fr>::new_ref();
                    cs.set_mode(ark_relations::gr1cs::SynthesisMode::Setup);
                    let _ = CircomCircuit { r1cs: &r, witness: None }.generate_constraints(cs);
                }
                true
            }),
            short_run: None,
        },
        Target {
            name: "circom.wtns",
            seeds: vec![write_wtns(&w)],
            run: Box::new(move |b| {
                let Ok(w) = read_wtns::<Fr>(b) else { return false };
                let _ = r.check_witness(&w);
                true
            }),
            short_run: None,
        },
    ]
}
