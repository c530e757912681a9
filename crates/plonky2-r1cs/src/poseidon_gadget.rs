//! Poseidon over BN254 `Fr` as an R1CS gadget (`ark-r1cs-std` [`FpVar`]).
//!
//! The gadget is the native permutation ([`crate::poseidon`]) written over [`FpVar`]s. Round
//! constants and the MDS matrix are constants, so `ARK` and `MDS` are linear and cost nothing;
//! each S-box `x^5` costs 3 constraints (`x² = x·x`, `x⁴ = x²·x²`, `x⁵ = x⁴·x`). A permutation of
//! width `t` costs `3·(t·R_F + R_P)` constraints, fewer when a state element is a constant
//! (constant S-box inputs are folded):
//!
//! | width | constraints per permutation |
//! |---|---|
//! | 3 (`R_P = 57`) | `3·(3·8 + 57) = 243` |
//! | 4 (`R_P = 56`) | `3·(4·8 + 56) = 264` |

use ark_bn254::Fr;
use ark_r1cs_std::fields::fp::FpVar;
use ark_r1cs_std::fields::FieldVar;
use ark_relations::gr1cs::SynthesisError;

use crate::poseidon::{params_t3, PoseidonParams};

/// `x^5` in 3 constraints (none when `x` is a constant).
pub fn sbox_var(x: &FpVar<Fr>) -> Result<FpVar<Fr>, SynthesisError> {
    let x2 = x.square()?;
    let x4 = x2.square()?;
    Ok(x4 * x)
}

/// The Poseidon permutation over [`FpVar`]s, in place; `state.len()` must be `params.t`.
pub fn permute_var(params: &PoseidonParams, state: &mut [FpVar<Fr>]) -> Result<(), SynthesisError> {
    assert_eq!(state.len(), params.t, "Poseidon state of the wrong width");
    for round in 0..params.rounds() {
        for (s, c) in state.iter_mut().zip(&params.ark[round]) {
            *s += *c;
        }
        if params.is_full_round(round) {
            for s in state.iter_mut() {
                *s = sbox_var(s)?;
            }
        } else {
            state[0] = sbox_var(&state[0])?;
        }
        let next: Vec<FpVar<Fr>> = params
            .mds
            .iter()
            .map(|row| row.iter().zip(state.iter()).map(|(m, s)| s * *m).sum())
            .collect();
        state.clone_from_slice(&next);
    }
    Ok(())
}

/// circomlib's `Poseidon(2)` in-circuit: element 0 of the width-3 permutation of `(0, a, b)`
/// (the native [`crate::poseidon::poseidon2`]).
pub fn poseidon2_var(a: &FpVar<Fr>, b: &FpVar<Fr>) -> Result<FpVar<Fr>, SynthesisError> {
    let mut s = [FpVar::zero(), a.clone(), b.clone()];
    permute_var(params_t3(), &mut s)?;
    let [out, _, _] = s;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::poseidon::{params_t4, poseidon2};
    use ark_r1cs_std::alloc::AllocVar;
    use ark_r1cs_std::eq::EqGadget;
    use ark_r1cs_std::GR1CSVar;
    use ark_relations::gr1cs::ConstraintSystem;
    use ark_std::UniformRand;

    /// The gadget computes the native permutation, is satisfied, and costs `3·(t·R_F + R_P)`.
    #[test]
    fn gadget_equals_native_and_counts() {
        let mut rng = ark_std::test_rng();
        for (params, expected) in [(params_t3(), 243), (params_t4(), 264)] {
            let cs = ConstraintSystem::<Fr>::new_ref();
            let input: Vec<Fr> = (0..params.t).map(|_| Fr::rand(&mut rng)).collect();
            let mut vars: Vec<FpVar<Fr>> = input
                .iter()
                .map(|x| FpVar::new_witness(cs.clone(), || Ok(*x)))
                .collect::<Result<_, _>>()
                .unwrap();
            let before = cs.num_constraints();
            permute_var(params, &mut vars).unwrap();
            let count = cs.num_constraints() - before;
            let mut native = input.clone();
            params.permute(&mut native);
            let got: Vec<Fr> = vars.iter().map(|v| v.value().unwrap()).collect();
            assert_eq!(got, native);
            assert!(cs.is_satisfied().unwrap());
            println!("Poseidon-BN254 width {} permutation: {count} constraints", params.t);
            assert_eq!(count, expected);
        }
    }

    /// `poseidon2_var` equals circomlib's `Poseidon([a, b])`; a wrong claimed output is caught.
    #[test]
    fn two_to_one_gadget() {
        let mut rng = ark_std::test_rng();
        let (a, b) = (Fr::rand(&mut rng), Fr::rand(&mut rng));
        let cs = ConstraintSystem::<Fr>::new_ref();
        let av = FpVar::new_witness(cs.clone(), || Ok(a)).unwrap();
        let bv = FpVar::new_witness(cs.clone(), || Ok(b)).unwrap();
        let out = poseidon2_var(&av, &bv).unwrap();
        assert_eq!(out.value().unwrap(), poseidon2(a, b));
        // The first element of the state is the constant 0: its S-box in the first round is
        // folded, so this costs 3 constraints less than a full permutation.
        println!("poseidon2 (two-to-one) gadget: {} constraints", cs.num_constraints());
        assert_eq!(cs.num_constraints(), 240);
        let claimed = FpVar::new_witness(cs.clone(), || Ok(poseidon2(a, b) + Fr::from(1u64))).unwrap();
        out.enforce_equal(&claimed).unwrap();
        assert!(!cs.is_satisfied().unwrap());
    }
}
