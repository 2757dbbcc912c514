//! Blocking on a future: pollster natively; on the web, JSPI suspends the wasm stack until it is ready.
//!
//! The library stays synchronous on every target: the browser's event loop runs the WebGPU callbacks
//! while the wasm stack is suspended (inside a `#[wasm_bindgen(jspi)]` export), so one code path
//! serves native and web.

use std::future::Future;

/// Runs `fut` to completion on this thread.
#[cfg(not(target_arch = "wasm32"))]
pub fn block_on<F: Future>(fut: F) -> F::Output {
    pollster::block_on(fut)
}

/// `fut`'s output, or None after `bound` (the web's bounded wait on a callback; native waits poll the
/// device with their own bound instead).
#[cfg(target_arch = "wasm32")]
pub fn with_timeout<F: Future>(fut: F, bound: std::time::Duration) -> Option<F::Output> {
    use futures::future::{select, Either};
    let ms = bound.as_millis().min(i32::MAX as u128) as i32;
    let timer = js_sys::Promise::new(&mut |resolve, _| {
        web::set_timeout(&resolve, ms);
    });
    let timer = wasm_bindgen_futures::JsFuture::from(timer);
    match block_on(select(Box::pin(fut), timer)) {
        Either::Left((out, _)) => Some(out),
        Either::Right(_) => None,
    }
}

#[cfg(target_arch = "wasm32")]
pub use web::block_on;

#[cfg(target_arch = "wasm32")]
mod web {
    use std::cell::RefCell;
    use std::future::Future;
    use std::pin::pin;
    use std::sync::Arc;
    use std::task::{Context, Poll, Wake, Waker};

    use wasm_bindgen::prelude::*;

    #[wasm_bindgen]
    extern "C" {
        #[wasm_bindgen(js_name = setTimeout)]
        pub(super) fn set_timeout(f: &js_sys::Function, ms: i32) -> JsValue;
    }

    thread_local! {
        /// The resolve function of the promise the stack is suspended on; a wake resolves it.
        static RESUME: RefCell<Option<js_sys::Function>> = const { RefCell::new(None) };
        /// A wake that came while the future was being polled (no promise to resolve yet).
        static WOKEN: RefCell<bool> = const { RefCell::new(false) };
    }

    /// wasm32 without atomics has one thread: the waker needs no data, only the thread's slot.
    struct Resume;

    impl Wake for Resume {
        fn wake(self: Arc<Self>) {
            match RESUME.with(|r| r.borrow_mut().take()) {
                Some(resolve) => {
                    let _ = resolve.call0(&JsValue::UNDEFINED);
                }
                None => WOKEN.with(|w| *w.borrow_mut() = true),
            }
        }
    }

    /// Polls `fut`; while it is pending, suspends the wasm stack (JSPI) on a promise its waker resolves.
    /// Must run under a `#[wasm_bindgen(jspi)]` export (else the suspension throws a SuspendError), one
    /// such export at a time: the thread has one resume slot (the page runs one call at a time).
    pub fn block_on<F: Future>(fut: F) -> F::Output {
        let mut fut = pin!(fut);
        let waker = Waker::from(Arc::new(Resume));
        let mut cx = Context::from_waker(&waker);
        loop {
            WOKEN.with(|w| *w.borrow_mut() = false);
            if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
                return out;
            }
            if WOKEN.with(|w| *w.borrow()) {
                continue;
            }
            let promise = js_sys::Promise::new(&mut |resolve, _| {
                RESUME.with(|r| *r.borrow_mut() = Some(resolve));
            });
            #[allow(deprecated)] // JSPI is marked experimental in js-sys; the design relies on it.
            let _ = js_sys::futures::jspi_block_on_promise(&promise);
        }
    }
}
