//! The square-aware R1CS → SR1CS conversion: each constraint form takes the rows it should, and
//! for random assignments the SR1CS (with the prover's square variables) holds exactly when the
//! R1CS does. Then Pari proves a circuit of every form and refuses a false statement.

use ark_bls12_381::{Bls12_381, Fr};
use ark_ff::{AdditiveGroup, Field, One, UniformRand, Zero};
use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystemRef, LinearCombination, SynthesisError, Variable};
use ark_std::rand::SeedableRng;
use pari::r1cs::{synthesize_setup, Sr1cs};
use rand_chacha::ChaCha20Rng;

/// The forms, over public `x` and witnesses `u, v, y`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Form {
    /// `0 · u = y` (a empty): linear.
    Empty,
    /// `3 · u = y`: a constant factor.
    ConstA,
    /// `(u + x) · 5 = y`: b constant, with the instance inside.
    ConstB,
    /// `u · u = y`: a square.
    Square,
    /// `(2u + 2x) · (u + x) = y`: a = 2b.
    Proportional,
    /// `u · v = y`: needs two rows.
    Product,
}

const FORMS: [Form; 6] = [Form::Empty, Form::ConstA, Form::ConstB, Form::Square, Form::Proportional, Form::Product];

/// Rows the form's constraint takes.
fn rows(form: Form) -> usize {
    if form == Form::Product {
        2
    } else {
        1
    }
}

struct One1 {
    form: Form,
    /// `(x, u, v, y)`; `None` for setup.
    values: Option<[Fr; 4]>,
}

impl ConstraintSynthesizer<Fr> for One1 {
    fn generate_constraints(self, cs: ConstraintSystemRef<Fr>) -> Result<(), SynthesisError> {
        let val = |i: usize| self.values.map(|v| v[i]).ok_or(SynthesisError::AssignmentMissing);
        let x = cs.new_input_variable(|| val(0))?;
        let u = cs.new_witness_variable(|| val(1))?;
        let v = cs.new_witness_variable(|| val(2))?;
        let y = cs.new_witness_variable(|| val(3))?;
        let lc = |terms: &[(u64, Variable)]| {
            let mut l = LinearCombination::zero();
            for &(c, var) in terms {
                l += (Fr::from(c), var);
            }
            l
        };
        let (a, b) = match self.form {
            Form::Empty => (LinearCombination::zero(), lc(&[(1, u)])),
            Form::ConstA => (lc(&[(3, Variable::One)]), lc(&[(1, u)])),
            Form::ConstB => (lc(&[(1, u), (1, x)]), lc(&[(5, Variable::One)])),
            Form::Square => (lc(&[(1, u)]), lc(&[(1, u)])),
            Form::Proportional => (lc(&[(2, u), (2, x)]), lc(&[(1, u), (1, x)])),
            Form::Product => (lc(&[(1, u)]), lc(&[(1, v)])),
        };
        cs.enforce_r1cs_constraint(|| a, || b, || lc(&[(1, y)]))?;
        // v must appear somewhere, so every form has the same variables.
        cs.enforce_r1cs_constraint(|| lc(&[(1, v)]), || lc(&[(1, Variable::One)]), || lc(&[(1, v)]))?;
        Ok(())
    }
}

/// The value `y` must take for the constraint to hold.
fn product(form: Form, x: Fr, u: Fr, v: Fr) -> Fr {
    match form {
        Form::Empty => Fr::zero(),
        Form::ConstA => Fr::from(3u64) * u,
        Form::ConstB => (u + x) * Fr::from(5u64),
        Form::Square => u * u,
        Form::Proportional => (u + x).square().double(),
        Form::Product => u * v,
    }
}

fn sr1cs_holds(sr: &Sr1cs<Fr>, x: Fr, w: &[Fr]) -> bool {
    let inst = [Fr::one(), x];
    let mut z = inst.to_vec();
    z.extend(sr.witness(&inst, w));
    (0..sr.num_rows()).all(|j| sr.a.eval(j, &z).square() == sr.b.eval(j, &z))
}

#[test]
fn each_form_takes_its_rows_and_holds_exactly_when_the_r1cs_does() {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    for form in FORMS {
        let sr = synthesize_setup::<Fr, _>(One1 { form, values: None }).unwrap();
        // The form's rows, one row for the helper constraint (b constant), two outlined rows.
        assert_eq!(sr.num_rows(), rows(form) + 1 + 2, "{form:?}");
        assert_eq!(sr.r1cs_constraints as usize, rows(form) - 1, "{form:?}: square variables");
        for trial in 0..50 {
            let (x, u, v) = (Fr::rand(&mut rng), Fr::rand(&mut rng), Fr::rand(&mut rng));
            let good = product(form, x, u, v);
            let y = if trial % 2 == 0 { good } else { good + Fr::from(1 + trial as u64) };
            assert_eq!(sr1cs_holds(&sr, x, &[u, v, y]), y == good, "{form:?}, trial {trial}");
        }
    }
}

#[test]
fn pari_proves_every_form_and_refuses_false_statements() {
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    for form in FORMS {
        let (pk, vk) = pari::setup::<Bls12_381, _, _>(One1 { form, values: None }, &mut rng).unwrap();
        let pvk = vk.prepare().unwrap();
        let (x, u, v) = (Fr::from(7u64), Fr::from(11u64), Fr::from(13u64));
        let y = product(form, x, u, v);
        let proof = pari::prove(&pk, One1 { form, values: Some([x, u, v, y]) }, &mut rng).unwrap();
        pari::verify(&pvk, &[x], &proof).unwrap();
        // The instance is bound by its outlined row even where no constraint uses it.
        assert!(pari::verify(&pvk, &[x + Fr::one()], &proof).is_err(), "{form:?}: another x");
        // An assignment that breaks the constraint is refused by the prover.
        let bad = pari::prove(&pk, One1 { form, values: Some([x, u, v, y + Fr::one()]) }, &mut rng);
        assert!(bad.is_err(), "{form:?}: a false assignment was proved");
    }
}
