//! Built-in circuit families for tests, benchmarks and platform jobs, each constructible from
//! a small serializable description ([`CircuitFamily`]) and a witness seed.
//!
//! * `chain`: a multiplication chain `v_0 = s`, `v_{i+1} = v_i² + i` for `steps` steps, with the
//!   public input `y = v_steps` (one R1CS constraint per step, plus the final equality).
//! * `poseidon`: knowledge of a preimage of a Poseidon hash (ark-crypto-primitives' sponge
//!   gadget; rate 2, capacity 1, α = 5, 8 full and 57 partial rounds, constants from the Grain
//!   LFSR), with the digest as public input.

use ark_crypto_primitives::sponge::constraints::CryptographicSpongeVar;
use ark_crypto_primitives::sponge::poseidon::constraints::PoseidonSpongeVar;
use ark_crypto_primitives::sponge::poseidon::{find_poseidon_ark_and_mds, PoseidonConfig, PoseidonSponge};
use ark_crypto_primitives::sponge::{Absorb, CryptographicSponge};
use ark_ff::PrimeField;
use ark_r1cs_std::alloc::AllocVar;
use ark_r1cs_std::eq::EqGadget;
use ark_r1cs_std::fields::fp::FpVar;
use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystemRef, SynthesisError};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

/// A circuit family with its size parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "family", rename_all = "snake_case")]
pub enum CircuitFamily {
    /// Multiplication chain of `steps` steps (about `steps + 1` R1CS constraints).
    Chain { steps: usize },
    /// Poseidon preimage of `inputs` field elements.
    Poseidon { inputs: usize },
}

/// A circuit of a family, with or without its assignment (setup needs none).
#[derive(Clone, Debug)]
pub struct FamilyCircuit<F: PrimeField> {
    pub family: CircuitFamily,
    /// The secret input (`s` for the chain, the preimage for Poseidon).
    pub secret: Option<Vec<F>>,
    /// The public input (`y`, or the digest).
    pub public: Option<F>,
}

/// The Poseidon parameters used by the `poseidon` family.
pub fn poseidon_config<F: PrimeField>() -> PoseidonConfig<F> {
    let (full, partial, alpha, rate) = (8u64, 57u64, 5u64, 2usize);
    let (ark, mds) = find_poseidon_ark_and_mds::<F>(F::MODULUS_BIT_SIZE as u64, rate, full, partial, 0);
    PoseidonConfig::new(full as usize, partial as usize, alpha, mds, ark, rate, 1)
}

impl CircuitFamily {
    /// Checks the size parameter: `1 ≤ steps ≤ 2^22`, `1 ≤ inputs ≤ 64`.
    pub fn validate(&self) -> Result<(), String> {
        match *self {
            CircuitFamily::Chain { steps } if steps == 0 || steps > 1 << 22 => {
                Err(format!("chain: steps must be in 1..=4194304, got {steps}"))
            }
            CircuitFamily::Poseidon { inputs } if inputs == 0 || inputs > 64 => {
                Err(format!("poseidon: inputs must be in 1..=64, got {inputs}"))
            }
            _ => Ok(()),
        }
    }

    /// The circuit without assignment, for setup.
    pub fn blank<F: PrimeField>(&self) -> FamilyCircuit<F> {
        FamilyCircuit { family: *self, secret: None, public: None }
    }

    /// A satisfied instance from `seed`: the circuit with its assignment, and the public input.
    pub fn instance<F: PrimeField + Absorb>(&self, seed: u64) -> (FamilyCircuit<F>, Vec<F>) {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let (secret, public) = match *self {
            CircuitFamily::Chain { steps } => {
                let s = F::rand(&mut rng);
                let mut v = s;
                for i in 0..steps {
                    v = v.square() + F::from(i as u64);
                }
                (vec![s], v)
            }
            CircuitFamily::Poseidon { inputs } => {
                let pre: Vec<F> = (0..inputs).map(|_| F::rand(&mut rng)).collect();
                let mut sponge = PoseidonSponge::new(&poseidon_config::<F>());
                sponge.absorb(&pre);
                let d = sponge.squeeze_field_elements::<F>(1)[0];
                (pre, d)
            }
        };
        (FamilyCircuit { family: *self, secret: Some(secret), public: Some(public) }, vec![public])
    }
}

impl<F: PrimeField + Absorb> ConstraintSynthesizer<F> for FamilyCircuit<F> {
    fn generate_constraints(self, cs: ConstraintSystemRef<F>) -> Result<(), SynthesisError> {
        let public = FpVar::new_input(cs.clone(), || self.public.ok_or(SynthesisError::AssignmentMissing))?;
        match self.family {
            CircuitFamily::Chain { steps } => {
                let s = self.secret.as_ref().map(|v| v[0]);
                let mut v = FpVar::new_witness(cs.clone(), || s.ok_or(SynthesisError::AssignmentMissing))?;
                for i in 0..steps {
                    v = &v * &v + FpVar::Constant(F::from(i as u64));
                }
                v.enforce_equal(&public)?;
            }
            CircuitFamily::Poseidon { inputs } => {
                let mut pre = Vec::with_capacity(inputs);
                for i in 0..inputs {
                    let value = self.secret.as_ref().map(|v| v[i]);
                    pre.push(FpVar::new_witness(cs.clone(), || value.ok_or(SynthesisError::AssignmentMissing))?);
                }
                let mut sponge = PoseidonSpongeVar::new(cs.clone(), &poseidon_config::<F>());
                sponge.absorb(&pre)?;
                let d = sponge.squeeze_field_elements(1)?;
                d[0].enforce_equal(&public)?;
            }
        }
        Ok(())
    }
}
