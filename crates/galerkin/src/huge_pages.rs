//! Transparent huge pages for the few host arrays of gigabytes (the box mesh's connectivity at
//! 10^7 unknowns: 1.9 GB of `usize`), opt-in with `GALERKIN_HUGE_PAGES=on` for measuring: first
//! touch then faults 2 MiB pages instead of 4 KiB ones (512× fewer faults), and freeing unmaps
//! them faster. Not the default: where the kernel must compact memory to find 2 MiB pages
//! (`defrag = madvise`), the first touch can be slower instead.

/// Whether `GALERKIN_HUGE_PAGES=on` (or `1`) asks for huge pages.
pub fn enabled() -> bool {
    matches!(std::env::var("GALERKIN_HUGE_PAGES").as_deref(), Ok("on" | "1"))
}

/// Asks the kernel to back `v`'s whole pages with huge pages, when [`enabled`]; call it before
/// the first write (a `vec![0; n]` of this size is mapped but untouched). Best effort: returns
/// whether the advice was taken.
pub fn advise<T>(v: &mut [T]) -> bool {
    if !enabled() {
        return false;
    }
    advise_now(v)
}

#[cfg(target_os = "linux")]
fn advise_now<T>(v: &mut [T]) -> bool {
    extern "C" {
        fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
    }
    const MADV_HUGEPAGE: i32 = 14;
    const PAGE: usize = 4096;
    let start = v.as_mut_ptr() as usize;
    let end = start + std::mem::size_of_val(v);
    // madvise takes whole pages: the pages inside the slice only.
    let (a, b) = (start.div_ceil(PAGE) * PAGE, end / PAGE * PAGE);
    if b <= a {
        return false;
    }
    // SAFETY: [a, b) lies inside `v`'s allocation; the advice changes how its pages are backed,
    // never their contents.
    unsafe { madvise(a as *mut std::ffi::c_void, b - a, MADV_HUGEPAGE) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn advise_now<T>(_v: &mut [T]) -> bool {
    false
}

#[cfg(test)]
mod tests {
    /// The advice keeps the contents and is taken for a large vector on Linux.
    #[test]
    fn advice_keeps_contents() {
        let mut v: Vec<usize> = (0..(1 << 20)).collect();
        let taken = super::advise_now(&mut v);
        assert!(taken || !cfg!(target_os = "linux"));
        assert!(v.iter().enumerate().all(|(i, &x)| i == x));
        // Less than a page holds no whole page to advise.
        assert!(!super::advise_now(&mut [0u8; 16][..]));
    }
}
