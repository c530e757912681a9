//! The planner's request budget (issue 32 item 4, N1 of the platform review): a bound on the
//! memory that requests being received and decoded hold at once, whatever the number of
//! callers, that no one caller can take whole.
//!
//! A gRPC message arrives as a 5-byte prefix (a compression flag and the length) and then its
//! bytes; tonic buffers the bytes and prost decodes them, which may take up to
//! [`api::MAX_DECODED_PER_ENCODED_BYTE`] bytes per byte received ([`UPLOAD_METHOD`]'s chunks,
//! bytes and a name, take two: [`api::UPLOAD_DECODED_PER_ENCODED_BYTE`]). [`Metered`] reads the
//! prefix as it passes and reserves `length × (1 +` that factor`)` of the [`RequestBudget`]
//! before the message's bytes are read. The reservation is held until the call has answered
//! (the decoded request lives that long), or, on a stream, until the next message's prefix
//! arrives (the handler has taken the previous one by then). A call therefore holds at most one
//! message's reservation, and never waits while holding one: there is no deadlock.
//!
//! Shares, so that one caller cannot deny the others:
//! - **per tenant**: a tenant's calls together hold at most [`RequestBudget::tenant_share`]
//!   (three quarters of the budget; the open API's calls count as one tenant);
//! - **a slice for small calls**: the last sixteenth of the budget is taken only by messages
//!   of at most [`SMALL_MESSAGE_BYTES`], so that GetJob, CancelJob, ListJobs and small
//!   submissions answer while large messages fill the rest;
//! - **stalls**: a call whose client sends nothing for [`RequestBudget::stall`] (30 s) while it
//!   holds a reservation or is in the middle of a message fails with DEADLINE_EXCEEDED and
//!   gives its reservation back (a half-open connection or a client that announced a large
//!   message and stopped no longer holds it forever). The service's HTTP/2 keepalive closes
//!   connections whose peer is gone.
//!
//! When the budget cannot cover a message the call is answered `UNAVAILABLE` (retry later;
//! gRPC clients with a retry policy do) and its bytes are never read. A message that could
//! never fit a tenant's share is refused with `RESOURCE_EXHAUSTED`. An `UploadInput` also holds a
//! part of the object store's multipart upload while it runs ([`RequestBudget::reserve`] from
//! the handler), against its tenant's share too.
//!
//! Only calls that passed authentication reach [`Metered`] ([`crate::grpc_auth`]): an
//! unauthenticated body is dropped unread and costs nothing.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use http_body::{Body as HttpBody, Frame, SizeHint};
use tonic::Status;

/// The flag that sets the budget, named in refusals.
pub const FLAG: &str = "--request-budget-bytes";

/// The method whose messages decode to about their size ([`api::UPLOAD_DECODED_PER_ENCODED_BYTE`]).
pub const UPLOAD_METHOD: &str = "/prover.v1.JobService/UploadInput";

/// Messages of at most this many bytes may use the slice of the budget kept for small calls.
pub const SMALL_MESSAGE_BYTES: u64 = 64 << 10;

/// Seconds a call may send nothing while it holds a reservation or is in the middle of a
/// message (see the module doc).
pub const STALL_SECS: u64 = 30;

/// Bytes of the budget a message of `len` bytes takes: the bytes and their decoded form, at
/// the worst any request decodes to.
pub fn message_cost(len: u64) -> u64 {
    len.saturating_mul(1 + api::MAX_DECODED_PER_ENCODED_BYTE as u64)
}

/// [`message_cost`] for a message to `method` (an `UploadInput` chunk decodes to its size).
pub fn method_message_cost(method: &str, len: u64) -> u64 {
    if method == UPLOAD_METHOD {
        len.saturating_mul(1 + api::UPLOAD_DECODED_PER_ENCODED_BYTE as u64)
    } else {
        message_cost(len)
    }
}

/// The largest message (of the worst kind) a budget of `total` bytes takes from one tenant.
pub fn largest_message(total: u64) -> u64 {
    tenant_share(total) / (1 + api::MAX_DECODED_PER_ENCODED_BYTE as u64)
}

/// What one tenant's calls may hold of a budget of `total` bytes.
pub fn tenant_share(total: u64) -> u64 {
    total / 4 * 3
}

/// What only small messages ([`SMALL_MESSAGE_BYTES`]) may take of a budget of `total` bytes.
pub fn small_slice(total: u64) -> u64 {
    total / 16
}

/// Bytes shared by every call in flight (see the module doc).
#[derive(Debug)]
pub struct RequestBudget {
    total: u64,
    stall: std::time::Duration,
    state: Mutex<Shares>,
}

/// Bytes reserved, in all and per tenant.
#[derive(Debug, Default)]
struct Shares {
    used: u64,
    by_tenant: HashMap<String, u64>,
}

impl RequestBudget {
    pub fn new(total: u64) -> Arc<Self> {
        Self::with_stall(total, std::time::Duration::from_secs(STALL_SECS))
    }

    /// A budget whose calls fail once they send nothing for `stall` (see the module doc).
    pub fn with_stall(total: u64, stall: std::time::Duration) -> Arc<Self> {
        metrics::gauge!("prover_request_budget_bytes").set(total as f64);
        metrics::gauge!("prover_request_budget_used_bytes").set(0.0);
        Arc::new(Self { total, stall, state: Mutex::new(Shares::default()) })
    }

    /// The budget's size.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// What one tenant's calls may hold at once.
    pub fn tenant_share(&self) -> u64 {
        tenant_share(self.total)
    }

    /// How long a call may send nothing while it holds a reservation.
    pub fn stall(&self) -> std::time::Duration {
        self.stall
    }

    /// Bytes reserved now.
    pub fn used(&self) -> u64 {
        self.state.lock().expect("budget").used
    }

    /// Bytes `tenant`'s calls hold now.
    pub fn used_by(&self, tenant: &str) -> u64 {
        self.state.lock().expect("budget").by_tenant.get(tenant).copied().unwrap_or(0)
    }

    /// Reserves `bytes` for `what` (named in the refusal) of `tenant`'s, or refuses:
    /// `RESOURCE_EXHAUSTED` when it is more than a tenant's share, `UNAVAILABLE` when other
    /// calls hold too much, or the tenant's own calls hold its share. Not from the slice kept
    /// for small calls.
    pub fn reserve(self: &Arc<Self>, bytes: u64, what: &str, tenant: &str) -> Result<Reservation, Status> {
        self.reserve_as(bytes, what, tenant, false)
    }

    /// [`RequestBudget::reserve`]; a `small` call's message may take the small calls' slice.
    fn reserve_as(self: &Arc<Self>, bytes: u64, what: &str, tenant: &str, small: bool) -> Result<Reservation, Status> {
        let share = self.tenant_share();
        if bytes > share {
            metrics::counter!("prover_request_budget_refusals_total", "reason" => "too_large").increment(1);
            return Err(Status::resource_exhausted(format!(
                "{what} needs {bytes} bytes of the planner's request budget, and one caller may hold {share} of its {} bytes \
                 ({FLAG}): send at most {} bytes per message, or put the input in an upload",
                self.total,
                largest_message(self.total)
            )));
        }
        // Large messages leave the small calls' slice alone.
        let room = if small { self.total } else { self.total - small_slice(self.total) };
        let mut state = self.state.lock().expect("budget");
        let mine = state.by_tenant.get(tenant).copied().unwrap_or(0);
        if mine + bytes > share {
            drop(state);
            metrics::counter!("prover_request_budget_refusals_total", "reason" => "tenant_share").increment(1);
            return Err(Status::unavailable(format!(
                "{what} needs {bytes} bytes of the planner's request budget and your other calls hold {mine} of the {share} one \
                 caller may hold ({FLAG}); retry once they have answered"
            )));
        }
        if state.used + bytes > room {
            let held = state.used;
            drop(state);
            metrics::counter!("prover_request_budget_refusals_total", "reason" => "busy").increment(1);
            return Err(Status::unavailable(format!(
                "the planner is busy: {what} needs {bytes} bytes of its request budget and other calls hold {held} of its {} \
                 ({FLAG}); retry shortly",
                self.total
            )));
        }
        state.used += bytes;
        *state.by_tenant.entry(tenant.to_string()).or_default() += bytes;
        metrics::gauge!("prover_request_budget_used_bytes").set(state.used as f64);
        Ok(Reservation { budget: self.clone(), bytes, tenant: tenant.to_string() })
    }
}

/// Bytes of a [`RequestBudget`] held until dropped.
#[derive(Debug)]
pub struct Reservation {
    budget: Arc<RequestBudget>,
    bytes: u64,
    tenant: String,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let mut state = self.budget.state.lock().expect("budget");
        state.used -= self.bytes;
        if let Some(mine) = state.by_tenant.get_mut(&self.tenant) {
            *mine -= self.bytes;
            if *mine == 0 {
                state.by_tenant.remove(&self.tenant);
            }
        }
        metrics::gauge!("prover_request_budget_used_bytes").set(state.used as f64);
    }
}

/// The reservation of a call's current message, shared by its body and its answer: the call
/// holds it until both are gone.
pub type Held = Arc<Mutex<Option<Reservation>>>;

/// A request body that reserves each gRPC message's cost before its bytes are read.
pub struct Metered<B> {
    inner: B,
    budget: Arc<RequestBudget>,
    held: Held,
    /// The method, named in refusals.
    method: String,
    /// The caller's tenant (`""`: the open API), whose share the messages are reserved from.
    tenant: String,
    /// Armed while the call waits for its client holding a reservation or mid-message.
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
    /// Bytes of the current message's prefix seen so far.
    prefix: [u8; 5],
    prefix_len: usize,
    /// Bytes of the current message's body still to pass.
    remaining: u64,
    /// Set once a message was refused: the body ends there.
    failed: bool,
}

impl<B> Metered<B> {
    pub fn new(inner: B, budget: Arc<RequestBudget>, held: Held, method: String, tenant: String) -> Self {
        Self { inner, budget, held, method, tenant, stalled: None, prefix: [0; 5], prefix_len: 0, remaining: 0, failed: false }
    }

    /// Whether the call holds something of the budget, or is in the middle of a message.
    fn holding(&self) -> bool {
        self.remaining > 0 || self.prefix_len > 0 || self.held.lock().expect("held").is_some()
    }

    /// Walks `data` through the message framing, reserving each message whose prefix completes.
    fn account(&mut self, data: &Bytes) -> Result<(), Status> {
        let mut rest = data.clone();
        while rest.has_remaining() {
            if self.remaining > 0 {
                let n = self.remaining.min(rest.remaining() as u64);
                rest.advance(n as usize);
                self.remaining -= n;
                continue;
            }
            let take = (5 - self.prefix_len).min(rest.remaining());
            self.prefix[self.prefix_len..self.prefix_len + take].copy_from_slice(&rest[..take]);
            rest.advance(take);
            self.prefix_len += take;
            if self.prefix_len < 5 {
                break;
            }
            self.prefix_len = 0;
            let len = u32::from_be_bytes([self.prefix[1], self.prefix[2], self.prefix[3], self.prefix[4]]) as u64;
            // The previous message has been handed on: its reservation goes first, so that a
            // call never waits while holding one.
            let mut held = self.held.lock().expect("held");
            *held = None;
            if len > 0 {
                let what = format!("a {len}-byte message to {}", self.method);
                let small = len <= SMALL_MESSAGE_BYTES && self.method != UPLOAD_METHOD;
                *held = Some(self.budget.reserve_as(method_message_cost(&self.method, len), &what, &self.tenant, small)?);
            }
            self.remaining = len;
        }
        Ok(())
    }
}

impl<B> HttpBody for Metered<B>
where
    B: HttpBody<Data = Bytes, Error = Status> + Unpin,
{
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
        if self.failed {
            return Poll::Ready(None);
        }
        let frame = match Pin::new(&mut self.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                self.stalled = None;
                frame
            }
            Poll::Pending => {
                if !self.holding() {
                    self.stalled = None;
                    return Poll::Pending;
                }
                let stall = self.budget.stall;
                let timer = self.stalled.get_or_insert_with(|| Box::pin(tokio::time::sleep(stall)));
                if timer.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                // The client went quiet holding budget: give it back and end the call.
                self.failed = true;
                *self.held.lock().expect("held") = None;
                metrics::counter!("prover_request_budget_refusals_total", "reason" => "stalled").increment(1);
                let status = Status::deadline_exceeded(format!(
                    "the request to {} stalled: nothing received for {} s while it held the planner's request budget",
                    self.method,
                    stall.as_secs()
                ));
                tracing::warn!(method = %self.method, tenant = %self.tenant, "{}", status.message());
                return Poll::Ready(Some(Err(status)));
            }
            other => return other,
        };
        if let Some(data) = frame.data_ref() {
            let data = data.clone();
            if let Err(status) = self.account(&data) {
                self.failed = true;
                tracing::warn!(method = %self.method, "{}", status.message());
                return Poll::Ready(Some(Err(status)));
            }
        }
        Poll::Ready(Some(Ok(frame)))
    }

    fn is_end_stream(&self) -> bool {
        self.failed || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(messages: &[usize]) -> Vec<u8> {
        let mut out = Vec::new();
        for &n in messages {
            out.push(0);
            out.extend_from_slice(&(n as u32).to_be_bytes());
            out.extend(std::iter::repeat_n(7u8, n));
        }
        out
    }

    /// Feeds `bytes` to `account` in pieces of `step`, recording the bytes held after each.
    fn feed<B>(m: &mut Metered<B>, bytes: &[u8], step: usize) -> Result<Vec<u64>, Status> {
        let mut seen = Vec::new();
        for piece in bytes.chunks(step) {
            m.account(&Bytes::copy_from_slice(piece))?;
            seen.push(m.budget.used());
        }
        Ok(seen)
    }

    fn metered_on(budget: &Arc<RequestBudget>, tenant: &str) -> Metered<tonic::body::Body> {
        Metered::new(tonic::body::Body::empty(), budget.clone(), Held::default(), "/t/M".into(), tenant.into())
    }

    #[test]
    fn each_message_is_reserved_when_its_prefix_completes_and_released_at_the_next() {
        for step in [1, 2, 3, 5, 7, 1000] {
            let mut m = metered_on(&RequestBudget::new(2 * message_cost(100)), "t");
            let seen = feed(&mut m, &framed(&[100, 40, 0, 60]), step).unwrap();
            // Never more than one message's cost at once; the largest is seen whole when the
            // pieces are smaller than it.
            let max = *seen.iter().max().unwrap();
            assert!(max <= message_cost(100), "step {step}");
            if step < 100 {
                assert_eq!(max, message_cost(100), "step {step}");
            }
            // The last message's reservation is held until the call drops it.
            assert_eq!(m.budget.used(), message_cost(60), "step {step}");
            assert_eq!(m.budget.used_by("t"), message_cost(60), "step {step}");
            *m.held.lock().unwrap() = None;
            assert_eq!((m.budget.used(), m.budget.used_by("t")), (0, 0));
        }
    }

    #[test]
    fn a_message_over_what_is_free_is_unavailable_and_over_a_tenants_share_exhausted() {
        let budget = RequestBudget::new(message_cost(400));
        let other = budget.reserve(message_cost(250), "another call", "other").unwrap();
        let e = feed(&mut metered_on(&budget, "t"), &framed(&[200]), 1000).unwrap_err();
        assert_eq!(e.code(), tonic::Code::Unavailable);
        assert!(e.message().contains(FLAG) && e.message().contains("busy"), "{}", e.message());
        // A tenant's share is three quarters of the budget: 301 bytes never fit.
        let e = feed(&mut metered_on(&budget, "t"), &framed(&[301]), 1000).unwrap_err();
        assert_eq!(e.code(), tonic::Code::ResourceExhausted);
        assert!(e.message().contains(FLAG) && e.message().contains("upload"), "{}", e.message());
        drop(other);
        assert_eq!(budget.used(), 0);
    }

    /// N1: a tenant's calls hold at most its share; another tenant's fit beside them.
    #[test]
    fn one_tenant_holds_at_most_its_share() {
        let budget = RequestBudget::new(message_cost(400));
        let _a1 = budget.reserve(message_cost(250), "a's upload", "a").unwrap();
        let e = budget.reserve(message_cost(100), "a's second call", "a").unwrap_err();
        assert_eq!(e.code(), tonic::Code::Unavailable);
        assert!(e.message().contains("your other calls hold"), "{}", e.message());
        let _b = budget.reserve(message_cost(100), "b's call", "b").unwrap();
        assert_eq!((budget.used_by("a"), budget.used_by("b")), (message_cost(250), message_cost(100)));
    }

    /// N1: the last sixteenth is kept for small calls: large ones are refused before it is
    /// reached, small ones still fit.
    #[test]
    fn small_calls_keep_a_slice() {
        let budget = RequestBudget::new(1600);
        let _a = budget.reserve(1200, "a's large message", "a").unwrap();
        let _b = budget.reserve(300, "b's large message", "b").unwrap();
        assert_eq!(budget.reserve(1, "c's large message", "c").unwrap_err().code(), tonic::Code::Unavailable);
        let _c = budget.reserve_as(100, "c's status call", "c", true).unwrap();
        assert_eq!(budget.used(), 1600);
        // Through the framing: a 64 KiB message to an RPC other than UploadInput is small.
        let budget = RequestBudget::new(16 * message_cost(SMALL_MESSAGE_BYTES));
        let _a = budget.reserve(budget.tenant_share(), "a", "a").unwrap();
        let _b = budget.reserve(budget.total() - budget.tenant_share() - small_slice(budget.total()), "b", "b").unwrap();
        feed(&mut metered_on(&budget, "c"), &framed(&[SMALL_MESSAGE_BYTES as usize]), 1 << 20).unwrap();
        let mut upload = Metered::new(tonic::body::Body::empty(), budget.clone(), Held::default(), UPLOAD_METHOD.into(), "c".into());
        assert_eq!(feed(&mut upload, &framed(&[1]), 1000).unwrap_err().code(), tonic::Code::Unavailable);
    }

    /// An `UploadInput` chunk is charged near its size, any other message at the worst case.
    #[test]
    fn upload_chunks_cost_near_their_size() {
        assert_eq!(method_message_cost(UPLOAD_METHOD, 1 << 20), (1 + api::UPLOAD_DECODED_PER_ENCODED_BYTE as u64) << 20);
        assert_eq!(method_message_cost("/prover.v1.JobService/SubmitJob", 1 << 20), message_cost(1 << 20));
        assert!(method_message_cost(UPLOAD_METHOD, 1 << 20) * 10 < message_cost(1 << 20));
    }

    /// A body that hands out its frames, then never another (a client gone quiet).
    struct Quiet(std::collections::VecDeque<Bytes>);

    impl HttpBody for Quiet {
        type Data = Bytes;
        type Error = Status;
        fn poll_frame(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
            match self.0.pop_front() {
                Some(b) => Poll::Ready(Some(Ok(Frame::data(b)))),
                None => Poll::Pending,
            }
        }
    }

    async fn next<B: HttpBody<Data = Bytes, Error = Status> + Unpin>(m: &mut Metered<B>) -> Option<Result<Frame<Bytes>, Status>> {
        std::future::poll_fn(|cx| Pin::new(&mut *m).poll_frame(cx)).await
    }

    /// N1: a client that announces a message and stops sending holds its reservation only until
    /// the stall timeout (50 ms here: the test waits for the failure, however late it comes);
    /// one that holds nothing is left waiting (ten stall times here).
    #[tokio::test]
    async fn a_stalled_message_gives_its_reservation_back() {
        let budget = RequestBudget::with_stall(message_cost(1000), std::time::Duration::from_millis(50));
        let first = Bytes::from(framed(&[500])[..100].to_vec());
        let mut m = Metered::new(Quiet([first].into()), budget.clone(), Held::default(), "/t/M".into(), "t".into());
        assert!(next(&mut m).await.unwrap().is_ok());
        assert_eq!(budget.used(), message_cost(500));
        let e = next(&mut m).await.unwrap().unwrap_err();
        assert_eq!(e.code(), tonic::Code::DeadlineExceeded);
        assert!(e.message().contains("stalled"), "{}", e.message());
        assert_eq!(budget.used(), 0);
        assert!(next(&mut m).await.is_none(), "a failed body ends");
        // A whole empty message and then quiet: nothing held, nothing ends the call.
        let mut idle = Metered::new(Quiet([Bytes::from(framed(&[0]))].into()), budget.clone(), Held::default(), "/t/M".into(), "t".into());
        assert!(next(&mut idle).await.unwrap().is_ok());
        assert!(tokio::time::timeout(std::time::Duration::from_millis(500), next(&mut idle)).await.is_err(), "a call holding nothing was ended");
    }
}
