//! Preconditioners (stub).
