//! Stable binary encodings (little-endian, length-prefixed, versioned).
//!
//! * Node proof: `"RKNP" ‖ version:u8 (2) ‖ level:u32 ‖ index:u64 ‖ len:u32 ‖ plonky2 proof bytes`.
//! * Batch structure `Λ_I`: `"RKLI" ‖ version:u8 ‖ ℓ:u32 ‖ q:u32 ‖ |I|:u64 ‖ indices:u64* ‖
//!   #nodes:u32 ‖ (len:u32 ‖ node proof)* ‖ #siblings:u32 ‖ (level:u32 ‖ index:u64 ‖ C:4×u64)*`.
//!
//! Decoding checks magic, version, every length and every range, and never panics on
//! arbitrary bytes.

use std::collections::{BTreeMap, BTreeSet};

use plonky2::plonk::circuit_data::CommonCircuitData;
use plonky2::plonk::proof::ProofWithPublicInputs;

use crate::batch::BatchProof;
use crate::circuits::{Circuits, NUM_PUBLIC_INPUTS};
use crate::hash::Digest;
use crate::node::{NodeId, NodeProof, PublicValues};
use crate::{Error, Params, C, D, F};

const NODE_MAGIC: &[u8; 4] = b"RKNP";
const LAMBDA_MAGIC: &[u8; 4] = b"RKLI";
/// Version 2: node proofs carry `idx` (12 public inputs; circuit version 2).
const VERSION: u8 = 2;

/// Largest plonky2 proof body accepted (a node proof is about 130 KiB; this leaves room).
pub(crate) const MAX_PROOF_BYTES: usize = 1 << 20;

struct Reader<'a> {
    bytes: &'a [u8],
    what: &'static str,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        if self.bytes.len() < n {
            return Err(Error::Malformed(format!("{}: truncated", self.what)));
        }
        let (head, tail) = self.bytes.split_at(n);
        self.bytes = tail;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, Error> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, Error> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    fn u64(&mut self) -> Result<u64, Error> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    fn header(&mut self, magic: &[u8; 4]) -> Result<(), Error> {
        if self.take(4)? != magic {
            return Err(Error::Malformed(format!("{}: wrong magic bytes", self.what)));
        }
        let v = self.u8()?;
        if v != VERSION {
            return Err(Error::Malformed(format!("{}: unsupported version {v}", self.what)));
        }
        Ok(())
    }
    fn finish(&self) -> Result<(), Error> {
        if !self.bytes.is_empty() {
            return Err(Error::Malformed(format!("{}: {} trailing bytes", self.what, self.bytes.len())));
        }
        Ok(())
    }
}

pub(crate) fn encode_node_proof(p: &NodeProof) -> Vec<u8> {
    let proof = p.proof.to_bytes();
    let mut out = Vec::with_capacity(proof.len() + 21);
    out.extend_from_slice(NODE_MAGIC);
    out.push(VERSION);
    out.extend_from_slice(&p.id.level.to_le_bytes());
    out.extend_from_slice(&p.id.index.to_le_bytes());
    out.extend_from_slice(&(proof.len() as u32).to_le_bytes());
    out.extend_from_slice(&proof);
    out
}

/// Reads the header of an encoded node proof (which node it claims to be for) without
/// parsing the plonky2 proof, checking magic, version and the body's length.
pub(crate) fn peek_node_id(bytes: &[u8]) -> Result<NodeId, Error> {
    let mut r = Reader { bytes, what: "node proof" };
    r.header(NODE_MAGIC)?;
    let id = NodeId { level: r.u32()?, index: r.u64()? };
    let len = r.u32()? as usize;
    if len > MAX_PROOF_BYTES {
        return Err(Error::Malformed(format!("node proof: body of {len} bytes is over the limit of {MAX_PROOF_BYTES}")));
    }
    r.take(len)?;
    r.finish()?;
    Ok(id)
}

pub(crate) fn decode_node_proof(circuits: &Circuits, bytes: &[u8]) -> Result<NodeProof, Error> {
    decode_node_proof_with(circuits.params, bytes, |level| Ok(&circuits.data(level)?.common))
}

/// Decodes a node proof, taking the common circuit data of its level from `common_for`.
pub(crate) fn decode_node_proof_with<'a>(
    params: Params,
    bytes: &[u8],
    common_for: impl Fn(u32) -> Result<&'a CommonCircuitData<F, D>, Error>,
) -> Result<NodeProof, Error> {
    let mut r = Reader { bytes, what: "node proof" };
    r.header(NODE_MAGIC)?;
    let id = NodeId { level: r.u32()?, index: r.u64()? };
    id.check(&params)?;
    let len = r.u32()? as usize;
    if len > MAX_PROOF_BYTES {
        return Err(Error::Malformed(format!("node proof: body of {len} bytes is over the limit of {MAX_PROOF_BYTES}")));
    }
    let body = r.take(len)?.to_vec();
    r.finish()?;
    let common = common_for(id.level)?;
    // plonky2's reader validates lengths against the circuit's common data; guard against a
    // panic deep inside it anyway, since these bytes come from outside.
    let parsed: ProofWithPublicInputs<F, C, D> =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| ProofWithPublicInputs::from_bytes(body.clone(), common)))
            .map_err(|_| Error::Malformed("node proof: plonky2 proof bytes are malformed".into()))?
            .map_err(|e| Error::Malformed(format!("node proof: {e:?}")))?;
    if parsed.public_inputs.len() != NUM_PUBLIC_INPUTS {
        return Err(Error::Malformed(format!(
            "node proof: {} public inputs, expected {NUM_PUBLIC_INPUTS}",
            parsed.public_inputs.len()
        )));
    }
    // One encoding per proof: plonky2's reader ignores trailing bytes and keeps non-canonical
    // field elements, so re-encode and compare.
    if parsed.to_bytes() != body {
        return Err(Error::Malformed("node proof: plonky2 proof bytes are not in canonical form".into()));
    }
    let index = PublicValues::from_public_inputs(&parsed.public_inputs)?.index;
    if index != id.index {
        return Err(Error::Malformed(format!("node proof: header says node {id}, the proof is for index {index}")));
    }
    Ok(NodeProof { id, proof: parsed })
}

pub(crate) fn encode_lambda(l: &BatchProof) -> Vec<u8> {
    let mut out = encode_lambda_head(l.params, &l.batch, l.nodes.len());
    for p in l.nodes.values() {
        out.extend(encode_lambda_node(p));
    }
    out.extend(encode_lambda_tail(&l.siblings));
    out
}

/// `Λ_I`'s encoding up to its node proofs: header, parameters, batch, node count.
pub(crate) fn encode_lambda_head(params: Params, batch: &BTreeSet<u64>, nodes: usize) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(LAMBDA_MAGIC);
    out.push(VERSION);
    out.extend_from_slice(&params.log_n.to_le_bytes());
    out.extend_from_slice(&params.log_bucket.to_le_bytes());
    out.extend_from_slice(&(batch.len() as u64).to_le_bytes());
    for i in batch {
        out.extend_from_slice(&i.to_le_bytes());
    }
    out.extend_from_slice(&(nodes as u32).to_le_bytes());
    out
}

/// One node proof of `Λ_I`'s encoding (length-prefixed), in node order.
pub(crate) fn encode_lambda_node(p: &NodeProof) -> Vec<u8> {
    let b = p.to_bytes();
    let mut out = Vec::with_capacity(4 + b.len());
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(&b);
    out
}

/// The end of `Λ_I`'s encoding: the sibling hashes.
pub(crate) fn encode_lambda_tail(siblings: &BTreeMap<NodeId, Digest>) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&(siblings.len() as u32).to_le_bytes());
    for (id, c) in siblings {
        out.extend_from_slice(&id.level.to_le_bytes());
        out.extend_from_slice(&id.index.to_le_bytes());
        for w in c.0 {
            out.extend_from_slice(&w.to_le_bytes());
        }
    }
    out
}

pub(crate) fn decode_lambda(circuits: &Circuits, bytes: &[u8]) -> Result<BatchProof, Error> {
    let mut r = Reader { bytes, what: "batch structure" };
    r.header(LAMBDA_MAGIC)?;
    let params = Params { log_n: r.u32()?, log_bucket: r.u32()? };
    if params != circuits.params {
        return Err(Error::input(format!(
            "batch structure is for log_n = {}, log_bucket = {}; circuits are for log_n = {}, log_bucket = {}",
            params.log_n, params.log_bucket, circuits.params.log_n, circuits.params.log_bucket
        )));
    }
    let k = r.u64()?;
    if k > params.num_leaves() || k as usize > r.bytes.len() / 8 {
        return Err(Error::Malformed(format!("batch structure: batch size {k} is impossible")));
    }
    let mut batch = BTreeSet::new();
    for _ in 0..k {
        let i = r.u64()?;
        if i >= params.num_leaves() || !batch.insert(i) {
            return Err(Error::Malformed(format!("batch structure: bad or repeated index {i}")));
        }
    }
    let mut nodes = BTreeMap::new();
    for _ in 0..r.u32()? {
        let len = r.u32()? as usize;
        let p = decode_node_proof(circuits, r.take(len)?)?;
        if nodes.insert(p.id, p).is_some() {
            return Err(Error::Malformed("batch structure: repeated node".into()));
        }
    }
    let mut siblings = BTreeMap::new();
    for _ in 0..r.u32()? {
        let id = NodeId { level: r.u32()?, index: r.u64()? };
        id.check(&params)?;
        let c = Digest::from_elements([r.u64()?, r.u64()?, r.u64()?, r.u64()?])?;
        siblings.insert(id, c);
    }
    r.finish()?;
    Ok(BatchProof { params, batch, nodes, siblings })
}
