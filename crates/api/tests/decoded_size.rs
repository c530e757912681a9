//! How much memory decoding a request takes per byte received: the planner reserves
//! `encoded × (1 + MAX_DECODED_PER_ENCODED_BYTE)` of its request budget for each message
//! before reading it (`platform::budget`), so the constant must bound every request message.
//!
//! Each case is the cheapest encoding of the most elements of one repeated field (one or two
//! bytes per element), decoded with prost under an allocator that records the peak of the
//! bytes the decoding thread holds (a growing `Vec` holds its old and new buffers at once, so
//! each case has one element past a power of two).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use api::v1 as pb;
use prost::Message;

struct Counting;

thread_local! {
    static HELD: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grow(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        let _ = HELD.try_with(|h| h.set(h.get().saturating_sub(layout.size())));
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // Counted as the allocator may do it: the new buffer is allocated before the old one is
        // freed.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            grow(new_size);
            let _ = HELD.try_with(|h| h.set(h.get().saturating_sub(layout.size())));
        }
        p
    }
}

fn grow(bytes: usize) {
    let _ = HELD.try_with(|h| {
        let now = h.get() + bytes;
        h.set(now);
        let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
    });
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Peak bytes held while `f` runs, above what was held before it.
fn peak_of<T>(f: impl FnOnce() -> T) -> (usize, T) {
    let base = HELD.with(|h| h.get());
    PEAK.with(|p| p.set(base));
    let out = f();
    (PEAK.with(|p| p.get()) - base, out)
}

/// Appends a length-delimited field.
fn delimited(out: &mut Vec<u8>, tag: u32, body: &[u8]) {
    prost::encoding::encode_key(tag, prost::encoding::WireType::LengthDelimited, out);
    prost::encoding::encode_varint(body.len() as u64, out);
    out.extend_from_slice(body);
}

/// A `SubmitJobRequest` whose `params` field (number `field`) holds `params`.
fn submit(field: u32, params: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    delimited(&mut out, field, params);
    out
}

/// The field number of `oneof params` member `name` in `SubmitJobRequest`.
fn params_field(name: &str) -> u32 {
    let probe = |p: pb::submit_job_request::Params| {
        let bytes = pb::SubmitJobRequest { params: Some(p), ..Default::default() }.encode_to_vec();
        let (tag, _) = prost::encoding::decode_key(&mut &bytes[..]).expect("key");
        tag
    };
    match name {
        "reckle_batch" => probe(pb::submit_job_request::Params::ReckleBatch(Default::default())),
        "reckle_update" => probe(pb::submit_job_request::Params::ReckleUpdate(Default::default())),
        "pari_circom" => probe(pb::submit_job_request::Params::PariCircom(Default::default())),
        other => panic!("{other}"),
    }
}

#[test]
fn decoding_any_request_takes_at_most_the_stated_bytes_per_byte_received() {
    // Elements per case: just past a power of two, where a growing Vec holds the most.
    const N: usize = (1 << 20) + 1;
    // (case, encoded request, decoder)
    type Decode = fn(&[u8]) -> Result<(), prost::DecodeError>;
    let mut cases: Vec<(&str, Vec<u8>, Decode)> = Vec::new();

    // Inline leaves, packed, one byte per value.
    let mut packed = Vec::new();
    delimited(&mut packed, 1, &vec![0u8; N]); // LeafValues.values
    let mut batch = Vec::new();
    delimited(&mut batch, 4, &packed); // ReckleBatchParams.inline
    let decode_submit: Decode = |b| pb::SubmitJobRequest::decode(b).map(drop);
    cases.push(("reckle_batch leaves.inline.values (packed, 1 B each)", submit(params_field("reckle_batch"), &batch), decode_submit));

    // Inline leaves, unpacked (prost accepts both): key + one byte per value.
    let mut unpacked = Vec::new();
    for _ in 0..N {
        prost::encoding::encode_key(1, prost::encoding::WireType::Varint, &mut unpacked);
        unpacked.push(0);
    }
    let mut batch = Vec::new();
    delimited(&mut batch, 4, &unpacked);
    cases.push(("reckle_batch leaves.inline.values (unpacked)", submit(params_field("reckle_batch"), &batch), decode_submit));

    // The batch indices, packed.
    let mut batch = Vec::new();
    delimited(&mut batch, 3, &vec![0u8; N]);
    cases.push(("reckle_batch batch (packed, 1 B each)", submit(params_field("reckle_batch"), &batch), decode_submit));

    // Empty changes: two bytes each.
    let mut update = Vec::new();
    for _ in 0..N {
        delimited(&mut update, 2, &[]);
    }
    cases.push(("reckle_update changes (empty, 2 B each)", submit(params_field("reckle_update"), &update), decode_submit));

    // Empty witness keys: two bytes each.
    let mut circom = Vec::new();
    for _ in 0..N {
        delimited(&mut circom, 2, &[]);
    }
    cases.push(("pari_circom witness_object_keys (empty, 2 B each)", submit(params_field("pari_circom"), &circom), decode_submit));

    // GetBundle's job ids, empty: two bytes each.
    let mut bundle = Vec::new();
    for _ in 0..N {
        delimited(&mut bundle, 2, &[]);
    }
    cases.push(("GetBundle job_ids (empty, 2 B each)", bundle, |b| pb::GetBundleRequest::decode(b).map(drop)));

    println!("| request field | encoded | decoded peak | per byte |\n|---|---:|---:|---:|");
    let mut worst = 0.0f64;
    for (name, bytes, decode) in &cases {
        let (peak, out) = peak_of(|| decode(bytes));
        out.unwrap_or_else(|e| panic!("{name}: {e}"));
        let ratio = peak as f64 / bytes.len() as f64;
        println!("| {name} | {} | {peak} | {ratio:.1} |", bytes.len());
        worst = worst.max(ratio);
    }
    assert!(
        worst <= api::MAX_DECODED_PER_ENCODED_BYTE as f64,
        "a request decodes to {worst:.1} bytes per byte received, over MAX_DECODED_PER_ENCODED_BYTE = {}",
        api::MAX_DECODED_PER_ENCODED_BYTE
    );
    // The bound is not loose by more than a factor of two (it sizes the planner's memory).
    assert!(worst * 2.0 > api::MAX_DECODED_PER_ENCODED_BYTE as f64, "worst {worst:.1}: lower the constant");
}

#[test]
fn upload_chunks_decode_to_their_size() {
    for n in [(1usize << 20) + 1, 4 << 20] {
        let chunk = pb::UploadChunk { name: "leaves.bin".into(), total_size: 1 << 30, data: vec![7u8; n] };
        let bytes = chunk.encode_to_vec();
        let (peak, out) = peak_of(|| pb::UploadChunk::decode(bytes.as_slice()));
        assert_eq!(out.unwrap().data.len(), n);
        let ratio = peak as f64 / bytes.len() as f64;
        println!("UploadChunk of {n} bytes: decoded peak {peak}, {ratio:.3} per byte");
        assert!(
            ratio <= api::UPLOAD_DECODED_PER_ENCODED_BYTE as f64,
            "an upload chunk decodes to {ratio:.3} bytes per byte received, over UPLOAD_DECODED_PER_ENCODED_BYTE"
        );
    }
}
