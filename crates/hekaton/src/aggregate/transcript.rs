//! The Fiat–Shamir transcript of the aggregation: a running BLAKE2b-512 state. Every message
//! is absorbed as its compressed canonical encoding behind its length; a challenge is the
//! state hashed with a counter, read as a field element and never zero (so it is invertible).

use ark_ff::PrimeField;
use ark_serialize::CanonicalSerialize;
use blake2::{Blake2b512, Digest};

use crate::Error;

#[derive(Clone)]
pub struct Transcript {
    state: [u8; 64],
}

impl Transcript {
    /// A transcript for one protocol run, named by a domain label.
    pub fn new(label: &[u8]) -> Self {
        let mut h = Blake2b512::new();
        h.update(b"hekaton/aggregate/v1");
        h.update((label.len() as u64).to_le_bytes());
        h.update(label);
        Transcript {
            state: h.finalize().into(),
        }
    }

    /// Absorbs one message.
    pub fn append<T: CanonicalSerialize>(&mut self, value: &T) -> Result<(), Error> {
        let mut bytes = Vec::with_capacity(value.compressed_size());
        value.serialize_compressed(&mut bytes)?;
        let mut h = Blake2b512::new();
        h.update(self.state);
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
        self.state = h.finalize().into();
        Ok(())
    }

    /// A nonzero challenge; the state moves on, so two calls give two challenges.
    pub fn challenge<F: PrimeField>(&mut self) -> F {
        let mut counter = 0u64;
        loop {
            let mut h = Blake2b512::new();
            h.update(self.state);
            h.update(b"challenge");
            h.update(counter.to_le_bytes());
            self.state = h.finalize().into();
            let x = F::from_le_bytes_mod_order(&self.state);
            if !x.is_zero() {
                return x;
            }
            counter += 1;
        }
    }
}
